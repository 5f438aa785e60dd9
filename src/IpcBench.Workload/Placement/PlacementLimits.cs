namespace IpcBench.Workload.Placement;

/// <summary>
/// What this process may ask of the scheduler, read once per check: the CPUs it may use, its capabilities and
/// limits, and whether the kernel throttles realtime threads. A value, so a validator can be tested against any machine.
/// </summary>
/// <param name="RealtimeRuntimeUs">/proc/sys/kernel/sched_rt_runtime_us: -1 when realtime throttling is off; null when unreadable.</param>
public sealed record PlacementLimits(
    AllowedCpus Cpus,
    ulong EffectiveCapabilities,
    ulong RtprioSoft,
    ulong RtprioHard,
    ulong MemlockSoft,
    long? RealtimeRuntimeUs)
{
    public static PlacementLimits OfThisProcess()
    {
        var (rtSoft, rtHard) = LinuxScheduling.GetLimit(LinuxScheduling.RlimitRtprio);
        return new PlacementLimits(
            AllowedCpus.OfThisProcess(),
            RealtimePermission.EffectiveCapabilities(),
            rtSoft,
            rtHard,
            LinuxScheduling.GetLimit(LinuxScheduling.RlimitMemlock).Soft,
            RealtimePermission.RealtimeRuntimeMicroseconds());
    }

    /// <summary>Null when SCHED_FIFO at <paramref name="priority"/> is permitted; else what is missing.</summary>
    public string? WhyNotPriority(int priority) => RealtimePermission.WhyNot(priority, EffectiveCapabilities, RtprioSoft, RtprioHard);

    public string? WhyNotLockMemory() => RealtimePermission.WhyNotLockMemory(EffectiveCapabilities, MemlockSoft);

    /// <summary>True when realtime threads may keep their CPU forever (throttling off): no realtime thread may then poll.</summary>
    public bool RealtimeUnthrottled => RealtimeRuntimeUs == -1;
}
