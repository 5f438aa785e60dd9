namespace IpcBench.Workload.Placement;

/// <summary>
/// Where one hot-loop thread runs and at what priority, applied by that thread to itself before its first message.
/// Everything is prepared at construction, so <see cref="ApplyToCurrentThread"/> allocates nothing unless it fails.
/// </summary>
public sealed class ThreadPlacement
{
    private readonly ulong[]? _mask;

    /// <param name="cpus">The CPUs the thread may run on; null or empty leaves the kernel to decide.</param>
    /// <param name="realtimePriority">0 keeps the normal policy; 1..99 is SCHED_FIFO at that level.</param>
    public ThreadPlacement(CpuSet? cpus, int realtimePriority)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(realtimePriority);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(realtimePriority, RealtimePermission.MaxPriority);
        Cpus = cpus is { IsEmpty: false } ? cpus : null;
        _mask = Cpus?.ToMask();
        RealtimePriority = realtimePriority;
    }

    /// <summary>Neither pinned nor raised: applying it does nothing.</summary>
    public static ThreadPlacement None { get; } = new(null, 0);

    public CpuSet? Cpus { get; }

    public int RealtimePriority { get; }

    public bool IsNone => Cpus is null && RealtimePriority == 0;

    /// <summary>Pins and raises the calling thread.</summary>
    /// <param name="thread">The thread's name for the error message.</param>
    /// <exception cref="PlacementException">The kernel refused; the message names the call, the CPUs or priority and errno.</exception>
    public unsafe void ApplyToCurrentThread(string thread)
    {
        if (_mask is not null)
        {
            fixed (ulong* mask = _mask)
            {
                if (LinuxScheduling.SchedSetAffinity(0, _mask.Length * sizeof(ulong), mask) != 0)
                {
                    throw new PlacementException($"{thread}: could not pin to CPU {Cpus}: sched_setaffinity failed with {LinuxScheduling.LastError()}");
                }
            }
        }

        if (RealtimePriority > 0)
        {
            var param = new LinuxScheduling.SchedParam { Priority = RealtimePriority };
            if (LinuxScheduling.SchedSetScheduler(0, LinuxScheduling.SchedFifo | LinuxScheduling.SchedResetOnFork, &param) != 0)
            {
                throw new PlacementException($"{thread}: could not take SCHED_FIFO priority {RealtimePriority}: sched_setscheduler failed with {LinuxScheduling.LastError()}");
            }
        }
    }

    public override string ToString() =>
        IsNone ? "unpinned, normal priority" : $"CPU {(Cpus is null ? "any" : Cpus.ToString())}, {(RealtimePriority > 0 ? $"SCHED_FIFO {RealtimePriority}" : "normal priority")}";
}

/// <summary>The kernel refused a placement at run time (a CPU taken offline, a capability dropped since validation).</summary>
public sealed class PlacementException(string message) : Exception(message);
