namespace IpcBench.Soak;

/// <summary>The soak's leak verdict: how much a process's live heap (<see cref="LiveHeap"/>) may grow between two readings.</summary>
public static class LiveHeapGrowth
{
    /// <summary>
    /// Live bytes may always grow this much between the two readings of a window: after a full blocking collection only
    /// live objects count, so steady state moves them by what is in flight at that instant and by pools filling.
    /// </summary>
    public const long MaxGrowthBytes = 8 << 20;

    /// <summary>
    /// And this much per second for each thing that keeps per-second results by design: a scenario in the daemon (its
    /// per-second series and latency histograms, kept for exports), an agent (its intervals until reported). The short
    /// soak (15 s, 7 transports at once, 2026-11-25) saw the daemon grow 3.1–6.4 MiB (≤ 62 KiB per scenario-second) and a
    /// scenario's 4 agents 0.5–5.7 MiB (≤ 97 KiB per agent-second, grpc-uds). A leak of one 24-byte object per message
    /// at the soak's slowest rate (~80 K msg/s) is 1.9 MB/s, ~29x this allowance per source, and crosses the fixed part
    /// in 5 s; over an hour the fixed part is 2.3 KiB/s. Growth above the allowance in a long soak is worth a look even when
    /// it is retention by design (grpc-uds's agents grew faster than this in 15 s). RSS could not be bounded so: it swung by
    /// 20 % (47 MiB) with the GC's budgets and mapped /dev/shm pages while the GC heap fell.
    /// </summary>
    public const long RetainedBytesPerSourceSecond = 64 << 10;

    /// <summary>What <paramref name="sources"/> (scenarios in the daemon, or agents) may add over <paramref name="seconds"/>.</summary>
    public static long Allowed(int sources, double seconds) => MaxGrowthBytes + (long)(RetainedBytesPerSourceSecond * sources * seconds);

    public static bool Leaked(LiveHeap first, LiveHeap last, long allowed) => last.LiveBytes - first.LiveBytes > allowed;

    public static string Describe(LiveHeap? first, LiveHeap? last, double seconds, long allowed) =>
        first is null || last is null
            ? "not measured (the process did not answer its diagnostics IPC)"
            : FormattableString.Invariant(
                $"{first.LiveBytes / 1048576.0:0.0} MiB -> {last.LiveBytes / 1048576.0:0.0} MiB live over {seconds:0} s ({(last.LiveBytes - first.LiveBytes) / 1048576.0:+0.0;-0.0} MiB, at most {allowed / 1048576.0:0.0} MiB); heap {first.HeapBytes / 1048576.0:0.0} -> {last.HeapBytes / 1048576.0:0.0} MiB");
}
