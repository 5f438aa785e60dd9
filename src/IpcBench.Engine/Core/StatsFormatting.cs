using HdrHistogram;
using IpcBench.Daemon.Model;
using IpcBench.Workload;

namespace IpcBench.Daemon.Core;

public static class StatsFormatting
{
    /// <summary>Every latency figure of a result, straight from HdrHistogram (values within its 3 significant digits).</summary>
    public static LatencySummary ToLatency(HistogramBase histogram, bool roundTrip) => new(
        roundTrip ? RunLatencyKind.RoundTrip : RunLatencyKind.OneWay,
        histogram.TotalCount,
        LatencyHistograms.Min(histogram),
        LatencyHistograms.Percentile(histogram, 50),
        LatencyHistograms.Percentile(histogram, 90),
        LatencyHistograms.Percentile(histogram, 99),
        LatencyHistograms.Percentile(histogram, 99.9),
        LatencyHistograms.Max(histogram),
        (long)LatencyHistograms.Mean(histogram))
    {
        P9999Ns = LatencyHistograms.Percentile(histogram, 99.99),
    };
}
