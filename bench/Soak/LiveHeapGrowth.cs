namespace IpcBench.Soak;

/// <summary>The soak's leak verdict: how much a process's live heap (<see cref="LiveHeap"/>) may grow between two probes.</summary>
public static class LiveHeapGrowth
{
    /// <summary>
    /// Live bytes may grow this much between the probe at the start of the measured window and the one near its end
    /// (up to 11 s apart in CI's 15 s window). After a full blocking collection nothing but live objects counts, so
    /// steady state moves it only by what is in flight at that instant and by what grows by design; a short soak
    /// (by hand, not yet wired into the soak's verdict) saw the 4 agents of a scenario together +1.8 to +3.7 MiB over 9-13 s (after a 5 s warmup), the daemon
    /// -10.3 MiB. A leak of 8 B per message at CI's ~100 K msg/s through the daemon, or of 750 KiB/s anywhere, crosses
    /// it in 11 s; a soak of an hour catches 2.3 KiB/s. RSS could not be bounded so: it swung by 20 % (47 MiB) with
    /// the GC's budgets and mapped /dev/shm pages while the GC heap fell.
    /// </summary>
    public const long MaxGrowthBytes = 8 << 20;

    public static bool Leaked(LiveHeap first, LiveHeap last) => last.LiveBytes - first.LiveBytes > MaxGrowthBytes;

    public static string Describe(LiveHeap? first, LiveHeap? last, double seconds) =>
        first is null || last is null
            ? "not measured (the process did not answer its diagnostics IPC)"
            : FormattableString.Invariant(
                $"{first.LiveBytes / 1048576.0:0.0} MiB -> {last.LiveBytes / 1048576.0:0.0} MiB live over {seconds:0} s ({(last.LiveBytes - first.LiveBytes) / 1048576.0:+0.0;-0.0} MiB, at most {MaxGrowthBytes / 1048576} MiB); heap {first.HeapBytes / 1048576.0:0.0} -> {last.HeapBytes / 1048576.0:0.0} MiB");
}
