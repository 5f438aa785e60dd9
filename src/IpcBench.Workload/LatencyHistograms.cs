using System.Runtime.CompilerServices;
using HdrHistogram;

namespace IpcBench.Workload;

/// <summary>
/// The one shape of every latency histogram (HdrHistogram, nanoseconds, 1 ns to 36 minutes at 3 significant digits)
/// and the statistics results report from it.
/// </summary>
public static class LatencyHistograms
{
    /// <summary>
    /// 2^41 - 1 ns, about 36.6 minutes. HdrHistogram.NET 2.5.0 computes a
    /// bucket's width as <c>1 &lt;&lt; bucketIndex</c> in 32 bits, so from 2^41 ns on (bucket 31) its equivalent-value
    /// arithmetic overflows: maxima, percentiles and the encoding's length go wrong and counts are lost. Longer
    /// latencies are clamped here.
    /// </summary>
    public const long HighestTrackableNs = (1L << 41) - 1;

    // 3 digits: 2048 sub-buckets, so every value is kept within 0.1 % (exact below 2048 ns).
    public const int SignificantDigits = 3;

    /// <summary>
    /// 64-bit counts: one bucket of a long soak at millions of messages a second passes 2^31 within minutes, and an
    /// IntHistogram would wrap silently.
    /// </summary>
    public static LongHistogram Create() => new(1, HighestTrackableNs, SignificantDigits);

    /// <summary>
    /// Records one latency without allocating. Clamped: HdrHistogram throws on values outside its range, and a hot loop
    /// must not (a clock step or a stamp from the future is not worth a failed scenario).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void RecordLatency(this LongHistogram histogram, long valueNs) =>
        histogram.RecordValue(Math.Clamp(valueNs, 0, HighestTrackableNs));

    /// <summary>The value at or below which <paramref name="percentile"/> % of the values fall (HdrHistogram's highest equivalent value); 0 when empty.</summary>
    public static long Percentile(HistogramBase histogram, double percentile) =>
        histogram.TotalCount == 0 ? 0 : histogram.GetValueAtPercentile(percentile);

    /// <summary>The lowest value equivalent to the smallest one recorded; 0 when empty.</summary>
    public static long Min(HistogramBase histogram)
    {
        foreach (var value in histogram.RecordedValues())
        {
            return histogram.LowestEquivalentValue(value.ValueIteratedTo);
        }

        return 0;
    }

    /// <summary>The highest value equivalent to the largest one recorded; 0 when empty.</summary>
    public static long Max(HistogramBase histogram) => histogram.TotalCount == 0 ? 0 : histogram.GetMaxValue();

    public static double Mean(HistogramBase histogram) => histogram.TotalCount == 0 ? 0 : histogram.GetMean();

    /// <summary>
    /// Sum of the values (bucket midpoints, as HdrHistogram's mean counts them), for Prometheus' _sum. One pass over
    /// the recorded buckets.
    /// </summary>
    public static double Sum(HistogramBase histogram) => Mean(histogram) * histogram.TotalCount;
}
