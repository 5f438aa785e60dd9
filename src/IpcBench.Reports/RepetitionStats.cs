namespace IpcBench.Reports;

/// <summary>A figure over a cell's repetitions: the median (what tables show) and the range (what error bars show).</summary>
public readonly record struct Spread(double Median, double Min, double Max)
{
    public static readonly Spread None = new(0, 0, 0);

    /// <summary>(max − min) / median in percent; 0 when the median is 0 (nothing to compare against).</summary>
    public double Percent => Median == 0 ? 0 : (Max - Min) / Median * 100;

    public static Spread Of(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        if (sorted.Length == 0)
        {
            return None;
        }

        int middle = sorted.Length / 2;
        double median = sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
        return new Spread(median, sorted[0], sorted[^1]);
    }
}

/// <summary>A cell's successful repetitions aggregated.</summary>
public sealed record CellSummary(
    int Repetitions,
    int Failed,
    Spread MessagesPerSecond,
    Spread BytesPerSecond,
    Spread DaemonCpuPercent,
    Spread AgentsCpuPercent,
    Spread LatencyP50,
    Spread LatencyP90,
    Spread LatencyP99,
    Spread LatencyP999,
    Spread LatencyP9999,
    Spread LatencyMax)
{
    /// <summary>
    /// Throughput's spread: the figure a ±10 % run-to-run target is about. Latency tails are not flagged: a p99.99 moves far
    /// more than 10 % between identical runs, so flagging it would mark every cell and say nothing.
    /// </summary>
    public double SpreadPercent => MessagesPerSecond.Percent;

    public bool SpreadExceeded => Repetitions > 1 && SpreadPercent > RepetitionStats.SpreadThresholdPercent;

    /// <summary>
    /// How well the msg/s median is known (<see cref="MedianPrecision"/>): the 95 % interval's half-width in percent of
    /// it; null with fewer than 2 successful repetitions.
    /// </summary>
    public double? MedianPrecisionPercent { get; init; }

    /// <summary>The successful repetitions summarized, for a metric's own median (<see cref="ReportMetric.Of"/>).</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public IReadOnlyList<RepetitionResult> Succeeded { get; init; } = [];

    /// <summary>CPU nanoseconds per delivered message of a role (CPU % of one core over msg/s), at the medians.</summary>
    public double CpuNanosecondsPerMessage(double cpuPercent) => RepetitionStats.CpuNanosecondsPerMessage(cpuPercent, MessagesPerSecond.Median);
}

/// <summary>Median and min–max per cell over its repetitions, and the spread flag.</summary>
public static class RepetitionStats
{
    /// <summary>Our own figures move about ±10 % run to run on a shared machine; beyond that the cell is marked.</summary>
    public const double SpreadThresholdPercent = 10;

    /// <summary>CPU nanoseconds per delivered message: CPU % of one core over msg/s (0 when nothing was delivered).</summary>
    public static double CpuNanosecondsPerMessage(double cpuPercent, double messagesPerSecond) =>
        messagesPerSecond <= 0 ? 0 : cpuPercent / 100 / messagesPerSecond * 1e9;

    public static CellSummary Summarize(IReadOnlyList<RepetitionResult> repetitions)
    {
        var ok = repetitions.Where(r => r.Succeeded).ToList();
        Spread Of(Func<RepetitionResult, double> figure) => Spread.Of(ok.Select(figure));
        return new CellSummary(
            ok.Count,
            repetitions.Count - ok.Count,
            Of(r => r.MessagesPerSecond),
            Of(r => r.BytesPerSecond),
            Of(r => r.DaemonCpuPercent),
            Of(r => r.AgentsCpuPercent),
            Of(r => r.Latency.P50),
            Of(r => r.Latency.P90),
            Of(r => r.Latency.P99),
            Of(r => r.Latency.P999),
            Of(r => r.Latency.P9999),
            Of(r => r.Latency.Max))
        {
            MedianPrecisionPercent = MedianPrecision.HalfWidthPercent([.. ok.Select(r => r.MessagesPerSecond)]),
            Succeeded = ok,
        };
    }
}
