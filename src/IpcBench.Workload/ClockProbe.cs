namespace IpcBench.Workload;

/// <summary>
/// The clock every latency here is read with: the kernel's clocksource (tsc reads in ~20 ns from user space; kvm-clock,
/// hpet or acpi_pm can cost a system call, hundreds of ns to µs, which then sits inside every latency sample and
/// every sampled message's cost) and the measured cost of one <see cref="MonotonicClock.NowNs"/>.
/// </summary>
public sealed record ClockProbe(string Source, double ReadNanoseconds)
{
    private const string SourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    private const int ReadsPerBatch = 20_000;
    private const int Batches = 7;

    public static ClockProbe Measure() => new(ReadSource(), MedianReadNanoseconds());

    /// <summary>The kernel's current clocksource, e.g. "tsc"; "unknown" where the file is missing (not Linux, a container without /sys).</summary>
    public static string ReadSource() => Placement.SysFiles.ReadTrimmed(SourceFile) is { Length: > 0 } source ? source : Placement.SysFiles.Unknown;

    /// <summary>
    /// Median over a few batches of back-to-back reads: a batch the scheduler interrupted is an outlier, not the cost.
    /// The first batch also brings the method to its final code.
    /// </summary>
    private static double MedianReadNanoseconds()
    {
        var perRead = new double[Batches];
        long sink = 0;
        for (int b = 0; b < Batches; b++)
        {
            long start = MonotonicClock.NowNs();
            for (int i = 0; i < ReadsPerBatch; i++)
            {
                sink ^= MonotonicClock.NowNs();
            }

            perRead[b] = (double)(MonotonicClock.NowNs() - start) / ReadsPerBatch;
        }

        GC.KeepAlive(sink);
        Array.Sort(perRead);
        return perRead[Batches / 2];
    }
}
