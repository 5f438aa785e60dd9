namespace IpcBench.Transports.Tests;

/// <summary>What a deterministic piece of code allocates on the calling thread, told apart from the runtime's own work.</summary>
internal static class ThreadAllocations
{
    /// <summary>
    /// The fewest bytes one of <paramref name="runs"/> identical runs of <paramref name="action"/> allocated, after one
    /// unmeasured run. Code that allocates does so on every run; what the runtime does on the same thread once (a loop's
    /// on-stack replacement, a first call's compilation and type loads, a tier-up) lands in one run only. A single
    /// measured second run once counted 4,064 bytes (fresh-clone CI, 2026-11-29) and once 7,840 (2026-11-30) against
    /// code that allocates nothing.
    /// </summary>
    public static long LeastOf(int runs, Action action)
    {
        action();
        long least = long.MaxValue;
        for (int run = 0; run < runs; run++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            action();
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        return least;
    }
}
