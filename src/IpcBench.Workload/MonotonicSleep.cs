using System.Runtime.InteropServices;

namespace IpcBench.Workload;

/// <summary>
/// Sleeps until an absolute <see cref="MonotonicClock"/> time with clock_nanosleep(TIMER_ABSTIME). Thread.Sleep takes
/// whole milliseconds and Thread.Sleep(0) only yields, so a paced BLOCK publisher used to yield through every gap
/// shorter than 2 ms: two publishers at 500 msg/s kept the daemon at ~190 % CPU, and a soak of four scenarios left
/// nothing of the machine to anything else.
/// </summary>
internal static unsafe partial class MonotonicSleep
{
    private const int ClockMonotonic = 1;
    private const int TimerAbsolute = 1;

    /// <summary>Returns at or (by the timer slack and wake-up, tens of µs) after <paramref name="deadlineNs"/>; early on a signal.</summary>
    public static void Until(long deadlineNs)
    {
        var request = new Timespec { Seconds = deadlineNs / 1_000_000_000, Nanoseconds = deadlineNs % 1_000_000_000 };
        ClockNanosleep(ClockMonotonic, TimerAbsolute, &request, null);
    }

    [LibraryImport("libc", EntryPoint = "clock_nanosleep")]
    private static partial int ClockNanosleep(int clock, int flags, Timespec* request, Timespec* remain);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
