using Google.Protobuf.WellKnownTypes;
using HdrHistogram;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Core;

public static class StatsFormatting
{
    /// <summary>Every latency figure of a result, straight from HdrHistogram (values within its 3 significant digits).</summary>
    public static LatencyStats ToLatency(HistogramBase histogram, bool roundTrip) => new()
    {
        Kind = roundTrip ? LatencyKind.RoundTrip : LatencyKind.OneWay,
        Samples = (ulong)histogram.TotalCount,
        Min = Nanoseconds(LatencyHistograms.Min(histogram)),
        P50 = Nanoseconds(LatencyHistograms.Percentile(histogram, 50)),
        P90 = Nanoseconds(LatencyHistograms.Percentile(histogram, 90)),
        P99 = Nanoseconds(LatencyHistograms.Percentile(histogram, 99)),
        P999 = Nanoseconds(LatencyHistograms.Percentile(histogram, 99.9)),
        Max = Nanoseconds(LatencyHistograms.Max(histogram)),
        Mean = Nanoseconds((long)LatencyHistograms.Mean(histogram)),
    };

    public static Duration Nanoseconds(long ns) => new() { Seconds = ns / 1_000_000_000, Nanos = (int)(ns % 1_000_000_000) };

    public static double ToNanoseconds(Duration? duration) => duration is null ? 0 : duration.Seconds * 1e9 + duration.Nanos;
}
