using System.Globalization;

namespace IpcBench.Workload.Placement;

/// <summary>
/// Whether this process may take a SCHED_FIFO priority, and whether a realtime spinner could starve the machine.
/// A thread may raise itself with CAP_SYS_NICE, or without it up to its RLIMIT_RTPRIO.
/// </summary>
public static class RealtimePermission
{
    public const int MaxPriority = 99;

    private const int CapSysNice = 23;
    private const int CapIpcLock = 14;

    /// <summary>Null when <paramref name="priority"/> is permitted; else what is missing, with the current values.</summary>
    public static string? WhyNot(int priority, ulong effectiveCapabilities, ulong rtprioSoft, ulong rtprioHard)
    {
        if (priority <= 0 || HasCapability(effectiveCapabilities, CapSysNice) || rtprioSoft >= (ulong)priority)
        {
            return null;
        }

        return string.Create(CultureInfo.InvariantCulture,
            $"SCHED_FIFO priority {priority} needs CAP_SYS_NICE or RLIMIT_RTPRIO >= {priority}; this process has neither (CAP_SYS_NICE absent from CapEff {effectiveCapabilities:x16}; RLIMIT_RTPRIO soft {Limit(rtprioSoft)}, hard {Limit(rtprioHard)}). Grant CAP_SYS_NICE (e.g. AmbientCapabilities=CAP_SYS_NICE in the systemd unit, --cap-add SYS_NICE in a container) or raise the limit (LimitRTPRIO=, ulimit -r)");
    }

    /// <summary>Null when mlockall(MCL_CURRENT | MCL_FUTURE) can lock this process; else what is missing.</summary>
    public static string? WhyNotLockMemory(ulong effectiveCapabilities, ulong memlockSoft)
    {
        // A .NET process maps far more than a typical RLIMIT_MEMLOCK (8 MB), and with MCL_FUTURE every later mapping
        // would fail once over it: only the capability or an unlimited limit makes locking safe.
        if (HasCapability(effectiveCapabilities, CapIpcLock) || memlockSoft == LinuxScheduling.RlimInfinity)
        {
            return null;
        }

        return string.Create(CultureInfo.InvariantCulture,
            $"locking all memory needs CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK; this process has neither (CAP_IPC_LOCK absent from CapEff {effectiveCapabilities:x16}; RLIMIT_MEMLOCK soft {Limit(memlockSoft)} bytes)");
    }

    /// <summary>
    /// /proc/sys/kernel/sched_rt_runtime_us: the share of each period realtime threads may use; -1 means no limit, so a
    /// realtime thread that never sleeps keeps its CPU from everything else for good. Null when it cannot be read.
    /// </summary>
    public static long? RealtimeRuntimeMicroseconds(string path = "/proc/sys/kernel/sched_rt_runtime_us") =>
        long.TryParse(SysFiles.ReadTrimmed(path), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value) ? value : null;

    /// <summary>CapEff of this process, from /proc/self/status (0 when unreadable: nothing is assumed permitted).</summary>
    public static ulong EffectiveCapabilities(string statusPath = "/proc/self/status")
    {
        foreach (var line in SysFiles.ReadLines(statusPath))
        {
            if (line.StartsWith("CapEff:", StringComparison.Ordinal)
                && ulong.TryParse(line.AsSpan(7).Trim(), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out ulong caps))
            {
                return caps;
            }
        }

        return 0;
    }

    private static bool HasCapability(ulong caps, int capability) => (caps & (1UL << capability)) != 0;

    private static string Limit(ulong value) => value == LinuxScheduling.RlimInfinity ? "unlimited" : value.ToString(CultureInfo.InvariantCulture);
}
