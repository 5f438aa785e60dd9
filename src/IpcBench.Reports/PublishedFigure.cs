namespace IpcBench.Reports;

/// <summary>Which of our measurements a published figure is read against.</summary>
public enum FigureMetric
{
    /// <summary>Delivered messages per second (round trips per second in MODE_ROUND_TRIP).</summary>
    MessagesPerSecond,

    /// <summary>Payload MiB per second, as SharedMemoryIPC counts its "MB/s".</summary>
    MebibytesPerSecond,

    /// <summary>Daemon and agents together, % of one core: the published "whole process" CPU.</summary>
    TotalCpuPercent,

    /// <summary>Half the round-trip p50 in µs: one-way latency as ping-pong benchmarks derive it.</summary>
    OneWayLatencyMicroseconds,
}

/// <summary>
/// A figure of docs/published-figures.md, attached to the cell that reproduces it. A published range is <see cref="Low"/> to
/// <see cref="High"/> (equal for a single figure); the ratio is read against its middle.
/// </summary>
public sealed record PublishedFigure(string Reference, string Label, FigureMetric Metric, double Low, double High, string MethodDifferences)
{
    public PublishedFigure(string reference, string label, FigureMetric metric, double value, string methodDifferences)
        : this(reference, label, metric, value, value, methodDifferences)
    {
    }

    public double Value => (Low + High) / 2;

    public string Unit => Metric switch
    {
        FigureMetric.MessagesPerSecond => "msg/s",
        FigureMetric.MebibytesPerSecond => "MiB/s",
        FigureMetric.TotalCpuPercent => "% CPU",
        FigureMetric.OneWayLatencyMicroseconds => "µs",
        _ => throw new ArgumentOutOfRangeException(nameof(Metric), Metric, null),
    };

    /// <summary>Higher is better for rates; for CPU and latency a ratio below 1 means we spend less.</summary>
    public bool HigherIsBetter => Metric is FigureMetric.MessagesPerSecond or FigureMetric.MebibytesPerSecond;

    /// <summary>Our figure in this figure's unit, from a cell's medians; null when the cell has no successful run.</summary>
    public double? Measured(CellSummary summary) => summary.Repetitions == 0 ? null : Metric switch
    {
        FigureMetric.MessagesPerSecond => summary.MessagesPerSecond.Median,
        FigureMetric.MebibytesPerSecond => summary.BytesPerSecond.Median / (1024 * 1024),
        FigureMetric.TotalCpuPercent => summary.DaemonCpuPercent.Median + summary.AgentsCpuPercent.Median,
        FigureMetric.OneWayLatencyMicroseconds => summary.LatencyP50.Median / 2 / 1e3,
        _ => throw new ArgumentOutOfRangeException(nameof(Metric), Metric, null),
    };

    /// <summary>The published figure as written, e.g. "648 K msg/s" or "0.1–0.3 µs".</summary>
    public string PublishedText => (Low == High ? Format(Low) : $"{Format(Low)}–{Format(High)}") + " " + Unit;

    public string Format(double value) => Metric switch
    {
        FigureMetric.MessagesPerSecond => ReportFormatting.Count(value),
        _ => ReportFormatting.Number(value),
    };
}
