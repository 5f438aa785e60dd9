using System.Globalization;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Tests.Infrastructure;
using Prometheus;

namespace IpcBench.Daemon.Tests;

/// <summary>The engine's latency histogram carried into prometheus-net's: buckets and count exact, the sum the source's.</summary>
[Collection(LightCollection.Name)]
public sealed class HistogramReplayTests
{
    private static readonly double[] Bounds = [0.001, 0.002, 0.005];

    [Fact]
    public async Task Replays_BucketsCountAndSum_AcrossScrapes()
    {
        var (registry, histogram) = NewHistogram();
        var replay = new HistogramReplay(Bounds);

        // 3 values in (0, 1 ms], 1 in (1, 2], 2 in (2, 5]; sum 0.0003 + 0.0005 + 0.0009 + 0.0015 + 0.003 + 0.004.
        var first = new LatencyBuckets([3, 4, 6], 6, 0.0102);
        Assert.True(replay.TryAdvance(first, histogram));
        await AssertExportedAsync(registry, first);

        // Later: 2 more in (1, 2] and 1 above the last bound (at 8 ms).
        var second = new LatencyBuckets([3, 6, 8], 9, 0.0102 + 0.0012 + 0.0018 + 0.008);
        Assert.True(replay.TryAdvance(second, histogram));
        await AssertExportedAsync(registry, second);
    }

    [Fact]
    public void RefusesASourceThatWentBackwards()
    {
        var (_, histogram) = NewHistogram();
        var replay = new HistogramReplay(Bounds);
        Assert.True(replay.TryAdvance(new LatencyBuckets([1, 2, 2], 2, 0.002), histogram));

        Assert.False(replay.TryAdvance(new LatencyBuckets([0, 1, 1], 1, 0.0015), histogram));
        Assert.Equal(2, histogram.Count);
    }

    private static (CollectorRegistry Registry, Histogram.Child Histogram) NewHistogram()
    {
        var registry = Metrics.NewCustomRegistry();
        var histogram = Metrics.WithCustomRegistry(registry)
            .CreateHistogram("test_latency_seconds", "test", ["kind"], new HistogramConfiguration { Buckets = Bounds })
            .WithLabels("one_way");
        return (registry, histogram);
    }

    private static async Task AssertExportedAsync(CollectorRegistry registry, LatencyBuckets expected)
    {
        using var stream = new MemoryStream();
        await registry.CollectAndExportAsTextAsync(stream);
        var metrics = MetricsText.Parse(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
        Assert.Empty(metrics.Problems);
        var buckets = metrics.Named("test_latency_seconds_bucket").ToList();
        Assert.Equal([.. Bounds.Select(b => b.ToString(CultureInfo.InvariantCulture)), "+Inf"],
            buckets.Select(b => double.TryParse(b.Label("le"), CultureInfo.InvariantCulture, out var le) ? le.ToString(CultureInfo.InvariantCulture) : b.Label("le")));
        Assert.Equal([.. expected.Cumulative.Select(c => (double)c), expected.Count], buckets.Select(b => b.Value));
        Assert.Equal(expected.Count, metrics.Named("test_latency_seconds_count").Single().Value);
        Assert.Equal(expected.SumSeconds, metrics.Named("test_latency_seconds_sum").Single().Value, 1e-12);
    }
}
