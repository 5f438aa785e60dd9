namespace IpcBench.Workload.Placement;

/// <summary>
/// The machine settings that move IPC figures besides placement: frequency scaling, CPUs kept from the scheduler and
/// the tick, a container's CPU quota, transparent huge pages. Each is <see cref="SysFiles.Unknown"/> when the kernel
/// does not expose it (no cpufreq in most VMs).
/// </summary>
/// <param name="FrequencyDriver">Per CPU asked: scaling_driver, e.g. "intel_pstate", "acpi-cpufreq".</param>
/// <param name="Governor">Per CPU asked: scaling_governor, e.g. "performance", "powersave".</param>
/// <param name="IsolatedCpus">/sys/devices/system/cpu/isolated (isolcpus=); empty when none.</param>
/// <param name="NohzFullCpus">/sys/devices/system/cpu/nohz_full; empty when none.</param>
/// <param name="KernelParameters">The placement-related parameters on the kernel's command line (isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity=).</param>
/// <param name="CgroupCpuQuota">The tightest cgroup CPU bandwidth limit, e.g. "2.00 CPUs (...)", or "none".</param>
/// <param name="TransparentHugePages">The selected mode of /sys/kernel/mm/transparent_hugepage/enabled, e.g. "madvise".</param>
public sealed record MachineTuning(
    IReadOnlyDictionary<int, string> FrequencyDriver,
    IReadOnlyDictionary<int, string> Governor,
    string IsolatedCpus,
    string NohzFullCpus,
    string KernelParameters,
    string CgroupCpuQuota,
    string TransparentHugePages)
{
    private static readonly string[] PlacementParameters = ["isolcpus=", "nohz_full=", "rcu_nocbs=", "irqaffinity=", "nosmt"];

    public static MachineTuning Read(CpuSet cpus, string cpuRoot = "/sys/devices/system/cpu")
    {
        ArgumentNullException.ThrowIfNull(cpus);
        var drivers = cpus.Cpus.ToDictionary(c => c, c => SysFiles.ReadTrimmed(Path.Combine(cpuRoot, $"cpu{c}", "cpufreq", "scaling_driver")) ?? SysFiles.Unknown);
        var governors = cpus.Cpus.ToDictionary(c => c, c => SysFiles.ReadTrimmed(Path.Combine(cpuRoot, $"cpu{c}", "cpufreq", "scaling_governor")) ?? SysFiles.Unknown);
        var cmdline = SysFiles.ReadTrimmed("/proc/cmdline");
        var parameters = cmdline is null
            ? SysFiles.Unknown
            : string.Join(' ', cmdline.Split(' ', StringSplitOptions.RemoveEmptyEntries)
                .TakeWhile(p => p != "--")
                .Where(p => PlacementParameters.Any(prefix => p.StartsWith(prefix, StringComparison.Ordinal))));
        return new MachineTuning(
            drivers,
            governors,
            SysFiles.ReadTrimmed(Path.Combine(cpuRoot, "isolated")) ?? SysFiles.Unknown,
            SysFiles.ReadTrimmed(Path.Combine(cpuRoot, "nohz_full")) ?? SysFiles.Unknown,
            parameters,
            Cgroups.OfThisProcess().CpuQuota(),
            SelectedMode(SysFiles.ReadTrimmed("/sys/kernel/mm/transparent_hugepage/enabled")));
    }

    /// <summary>"always [madvise] never" → "madvise".</summary>
    public static string SelectedMode(string? text)
    {
        if (text is null)
        {
            return SysFiles.Unknown;
        }

        int open = text.IndexOf('[', StringComparison.Ordinal);
        int close = text.IndexOf(']', StringComparison.Ordinal);
        return open >= 0 && close > open ? text[(open + 1)..close] : text;
    }
}
