namespace IpcBench.Workload.Placement;

/// <summary>
/// The CPUs this process may run its threads on: its affinity (sched_getaffinity of the main thread, which the cgroup
/// cpuset and any taskset already narrowed), the machine's online CPUs, and the cgroup's effective cpuset to say why
/// a CPU is missing.
/// </summary>
public sealed record AllowedCpus(CpuSet Allowed, CpuSet Online, CpuSet? CgroupCpus, string? CgroupFile)
{
    /// <summary>
    /// Read for this process. The main thread's affinity, not the caller's: a thread a pinned hot loop created inherits
    /// that pin and would report a narrower set than the process has.
    /// </summary>
    public static AllowedCpus OfThisProcess()
    {
        var allowed = LinuxScheduling.GetAffinity(Environment.ProcessId);
        var online = SysFiles.ReadCpuList("/sys/devices/system/cpu/online") ?? allowed;
        var cgroup = Cgroups.OfThisProcess().EffectiveCpus();
        return new AllowedCpus(allowed, online, cgroup?.Cpus, cgroup?.Path);
    }

    /// <summary>Null when every CPU of <paramref name="cpus"/> may be used; else why not, naming the CPUs and the allowed set.</summary>
    public string? WhyNot(CpuSet cpus)
    {
        ArgumentNullException.ThrowIfNull(cpus);
        var offline = cpus.Except(Online);
        if (!offline.IsEmpty)
        {
            return $"CPU {offline} does not exist or is offline on this machine (online: {Online}); the daemon may use {Allowed}";
        }

        var outside = cpus.Except(Allowed);
        if (outside.IsEmpty)
        {
            return null;
        }

        var why = CgroupCpus is not null && !outside.IsSubsetOf(CgroupCpus)
            ? $"the daemon's cgroup allows only {CgroupCpus} ({CgroupFile})"
            : "the daemon's CPU affinity excludes it (taskset, systemd CPUAffinity= or a container's --cpuset-cpus)";
        return $"CPU {outside} is not in the daemon's allowed set {Allowed}: {why}";
    }
}
