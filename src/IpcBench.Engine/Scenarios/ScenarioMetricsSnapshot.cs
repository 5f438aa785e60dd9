using HdrHistogram;
using IpcBench.Daemon.Model;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// What /metrics exports of one scenario, read from the engine's own counters at scrape time (nothing on the message
/// path touches a metric). Counters only grow while the scenario lives; a finished scenario's snapshot is final.
/// </summary>
public sealed record ScenarioMetricsSnapshot(
    string Id,
    ResolvedSpec Spec,
    RunState State,
    DateTime CreatedAt,
    DateTime? StartedAt,
    DateTime? EndedAt,
    double MeasuredSeconds,
    long MeasuredMessages,
    long MeasuredBytes,
    IReadOnlyList<PublisherMetrics> Publishers,
    IReadOnlyList<SubscriberMetrics> Subscribers,
    LatencyBuckets Latency)
{
    /// <summary>Others' CPU as a share (0..1) of the machine over the measured window so far; null before it was measured.</summary>
    public double? NoiseRatio { get; init; }

    /// <summary>Rate-limited runs: every publisher's sender lag merged; null in closed loop.</summary>
    public LatencyBuckets? SenderLag { get; init; }

    /// <summary>The soak judgement so far (open-ended scenarios, and timed ones long enough to judge); null otherwise.</summary>
    public SoakSummary? Soak { get; init; }
}

public readonly record struct PublisherMetrics(int Index, long Sent, long BadEchoes);

/// <summary>One subscriber's counters; <see cref="Process"/> is the agent's latest sample (null in-process).</summary>
public sealed record SubscriberMetrics(int Index, ReceiverCounters Counters, ProcessSample? Process);

/// <summary>A scenario's latency histogram at the fixed <see cref="UpperBoundsNs"/>: cumulative counts, as Prometheus buckets.</summary>
public sealed record LatencyBuckets(long[] Cumulative, long Count, double SumSeconds)
{
    /// <summary>
    /// 100 ns to 10 s at 1, 1.5, 2, 3, 5 and 7 per decade: fine enough that histogram_quantile's linear interpolation
    /// stays within a bucket's width, small enough (49 buckets) to keep a scrape cheap. Exact percentiles stay in
    /// GetScenario, computed from the full HDR histogram.
    /// </summary>
    public static readonly long[] UpperBoundsNs = BuildBounds();

    public static LatencyBuckets Empty { get; } = new(new long[UpperBoundsNs.Length], 0, 0);

    /// <summary>A recorded value counts at the lowest value of its HdrHistogram bucket (so within its 3 significant digits).</summary>
    public static LatencyBuckets From(HistogramBase histogram)
    {
        var cumulative = new long[UpperBoundsNs.Length];
        long running = 0;
        int bound = 0;
        foreach (var recorded in histogram.RecordedValues())
        {
            long value = histogram.LowestEquivalentValue(recorded.ValueIteratedTo);
            while (bound < cumulative.Length && value > UpperBoundsNs[bound])
            {
                cumulative[bound++] = running;
            }

            running += recorded.CountAtValueIteratedTo;
        }

        while (bound < cumulative.Length)
        {
            cumulative[bound++] = running;
        }

        return new LatencyBuckets(cumulative, histogram.TotalCount, LatencyHistograms.Sum(histogram) / 1e9);
    }

    private static long[] BuildBounds()
    {
        var bounds = new List<long>();
        for (long decade = 100; decade <= 1_000_000_000; decade *= 10)
        {
            foreach (var step in (double[])[1, 1.5, 2, 3, 5, 7])
            {
                bounds.Add((long)(decade * step));
            }
        }

        bounds.Add(10_000_000_000);
        return [.. bounds];
    }
}
