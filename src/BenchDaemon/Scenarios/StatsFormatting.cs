using Google.Protobuf.WellKnownTypes;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

public static class StatsFormatting
{
    public static LatencyStats ToLatency(LatencyHistogram histogram, bool roundTrip) => new()
    {
        Kind = roundTrip ? LatencyKind.RoundTrip : LatencyKind.OneWay,
        Samples = (ulong)histogram.TotalCount,
        Min = Nanoseconds(histogram.Min),
        P50 = Nanoseconds(histogram.ValueAtPercentile(50)),
        P90 = Nanoseconds(histogram.ValueAtPercentile(90)),
        P99 = Nanoseconds(histogram.ValueAtPercentile(99)),
        P999 = Nanoseconds(histogram.ValueAtPercentile(99.9)),
        Max = Nanoseconds(histogram.Max),
        Mean = Nanoseconds((long)histogram.Mean),
    };

    public static Duration Nanoseconds(long ns) => new() { Seconds = ns / 1_000_000_000, Nanos = (int)(ns % 1_000_000_000) };

    public static double ToNanoseconds(Duration? duration) => duration is null ? 0 : duration.Seconds * 1e9 + duration.Nanos;
}
