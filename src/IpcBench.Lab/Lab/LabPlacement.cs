using IpcBench.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Lab;

/// <summary>GetSuite's EnvironmentInfo made into the lab report's placement facts: the proto stops here.</summary>
internal static class LabPlacement
{
    /// <summary>Null when the suite ran no scenario (no environment) or the daemon predates placement facts.</summary>
    public static MachinePlacement? Of(EnvironmentInfo? environment)
    {
        if (environment?.Placement is not { } p)
        {
            return null;
        }

        static string Or(string value) => value.Length > 0 ? value : "–";
        return new MachinePlacement(
            Or(p.PublisherCpus),
            Or(p.SubscriberCpus),
            Or(environment.CoreToCoreCores),
            p.HasSamePhysicalCore ? (p.SamePhysicalCore ? "yes" : "no") : "–",
            [.. p.SharedCaches],
            Or(p.Smt),
            Or(p.SmtSiblings),
            Or(p.NumaNodes),
            $"{Or(p.CpufreqDriver)}/{Or(p.CpufreqGovernor)}",
            p.IsolatedCpus,
            p.NohzFullCpus,
            Or(p.CgroupCpuQuota),
            Or(p.TransparentHugePages));
    }
}
