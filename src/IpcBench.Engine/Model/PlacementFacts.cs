namespace IpcBench.Daemon.Model;

/// <summary>
/// The CPUs a scenario's hot loops ran on and what relates them, with the machine settings that move IPC figures:
/// what a result needs to be compared with another machine's (control.proto's EnvironmentInfo documents each field).
/// </summary>
/// <param name="PublisherCpus">The CPUs used by the publishers, e.g. "0", or "unpinned".</param>
/// <param name="SubscriberCpus">The CPUs used by the subscribers, or "unpinned".</param>
/// <param name="SmtSiblings">Per CPU used (all allowed CPUs when unpinned), its SMT siblings, e.g. "0:0-1 1:0-1".</param>
/// <param name="SamePhysicalCore">First publisher's and first subscriber's CPUs on one physical core; null when unpinned or unknown.</param>
/// <param name="SharedCaches">Caches those two CPUs share.</param>
/// <param name="NumaNodes">NUMA node per CPU, e.g. "0:0 1:0".</param>
public sealed record PlacementFacts(
    string PublisherCpus,
    string SubscriberCpus,
    string SmtSiblings,
    bool? SamePhysicalCore,
    IReadOnlyList<string> SharedCaches,
    string NumaNodes,
    string FrequencyDriver,
    string Governor,
    string IsolatedCpus,
    string NohzFullCpus,
    string KernelParameters,
    string CgroupCpuQuota,
    string TransparentHugePages,
    string Smt)
{
    public const string Unpinned = "unpinned";
}
