using System.Runtime.InteropServices;

namespace IpcBench.Workload;

/// <summary>
/// Sleeps for sub-millisecond spans, which <see cref="Thread.Sleep(int)"/> cannot (whole milliseconds): nanosleep,
/// with the calling thread's timer slack lowered so the kernel wakes it within microseconds rather than the 50 µs it may
/// otherwise add to coalesce wake-ups. A rate-limited publisher with the block strategy paces with it: it costs no CPU
/// between messages, where a yield loop would keep every paced publisher on a core.
/// </summary>
public static partial class PreciseSleep
{
    private const int PrSetTimerSlack = 29;
    private const long TimerSlackNs = 1_000;

    /// <summary>Lowers this thread's timer slack (Linux; a no-op elsewhere or when refused). Call once on the thread that sleeps.</summary>
    public static void PrepareThread()
    {
        if (OperatingSystem.IsLinux())
        {
            _ = Prctl(PrSetTimerSlack, (nuint)TimerSlackNs, 0, 0, 0);
        }
    }

    /// <summary>Sleeps about <paramref name="nanoseconds"/> (a signal may end it early: callers re-read their clock and loop).</summary>
    public static void For(long nanoseconds)
    {
        if (!OperatingSystem.IsLinux())
        {
            Thread.Sleep(TimeSpan.FromTicks(Math.Max(1, nanoseconds / 100)));
            return;
        }

        var span = new TimeSpec { Seconds = nanoseconds / 1_000_000_000, Nanoseconds = nanoseconds % 1_000_000_000 };
        _ = NanoSleep(in span, IntPtr.Zero);
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [LibraryImport("libc", EntryPoint = "nanosleep")]
    private static partial int NanoSleep(in TimeSpec duration, IntPtr remaining);

    [LibraryImport("libc", EntryPoint = "prctl")]
    private static partial int Prctl(int option, nuint arg2, nuint arg3, nuint arg4, nuint arg5);
}
