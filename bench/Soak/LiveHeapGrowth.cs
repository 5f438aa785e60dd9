namespace IpcBench.Soak;

/// <summary>The soak's leak verdict: how much a process's live heap (<see cref="LiveHeap"/>) may grow between two probes.</summary>
public static class LiveHeapGrowth
{
    /// <summary>
    /// Live bytes may grow this much between the probe at the start of the measured window and the one near its end
    /// (11 s apart in CI's 15 s window). After a full blocking collection nothing but live objects counts, so steady
    /// state moves it by what is in flight at that instant (queued messages, gRPC buffers, a report being written:
    /// well under 1 MiB seen) and by what grows by design (a finished interval a second per scenario: bytes). A leak of
    /// 8 B per message at CI's ~100 K msg/s through the daemon, or of 760 KiB/s anywhere, crosses it in 11 s; a soak
    /// of an hour catches 2.3 KiB/s. RSS could not: it swung by 20 % (47 MiB) with the GC's budgets and /dev/shm pages.
    /// </summary>
    public const long MaxGrowthBytes = 8 << 20;

    public static bool Leaked(LiveHeap first, LiveHeap last) => last.LiveBytes - first.LiveBytes > MaxGrowthBytes;

    public static string Describe(LiveHeap? first, LiveHeap? last, double seconds) =>
        first is null || last is null
            ? "not measured (the process did not answer its diagnostics IPC)"
            : FormattableString.Invariant(
                $"{first.LiveBytes / 1048576.0:0.0} MiB -> {last.LiveBytes / 1048576.0:0.0} MiB live over {seconds:0} s ({(last.LiveBytes - first.LiveBytes) / 1048576.0:+0.0;-0.0} MiB, at most {MaxGrowthBytes / 1048576} MiB); heap {first.HeapBytes / 1048576.0:0.0} -> {last.HeapBytes / 1048576.0:0.0} MiB");
}
