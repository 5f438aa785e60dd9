using System.Diagnostics;

namespace IpcBench.Workload;

/// <summary>
/// CLOCK_MONOTONIC in nanoseconds. On Linux Stopwatch reads that clock, which every process on the machine shares, so a
/// timestamp written by a publisher can be subtracted from one read by a subscriber in another process.
/// </summary>
public static class MonotonicClock
{
    private static readonly double NanosecondsPerTick = 1e9 / Stopwatch.Frequency;
    private static readonly bool TicksAreNanoseconds = Stopwatch.Frequency == 1_000_000_000;

    public static long NowNs()
    {
        long ticks = Stopwatch.GetTimestamp();
        return TicksAreNanoseconds ? ticks : (long)(ticks * NanosecondsPerTick);
    }
}
