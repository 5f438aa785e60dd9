using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>
/// A figure of a repetition that reports show or compare: <paramref name="Id"/> names it in comparisons (CompareSuites,
/// <c>compare</c>) and, with its unit, in the CSV; <paramref name="Read"/> takes it from a repetition. A cell's figure is
/// the median over its successful repetitions unless <see cref="OfCell"/> says otherwise.
/// </summary>
public sealed record ReportMetric(string Id, string Unit, Func<RepetitionResult, double> Read)
{
    /// <summary>Its column of the "Every cell" table (Markdown and HTML); null: not a column there.</summary>
    public string? Header { get; init; }

    /// <summary>A cell's figure as that column shows it.</summary>
    public Func<double, string> Text { get; init; } = Number;

    /// <summary>Which way is better when two suites are compared; null: shown, not compared.</summary>
    public bool? HigherIsBetter { get; init; }

    /// <summary>A cell's figure when it is not the median of the repetitions' own (a ratio of medians, say).</summary>
    public Func<CellSummary, double>? OfCell { get; init; }

    /// <summary>The CSV column: the id, and the unit when it is not already in the id.</summary>
    public string CsvColumn => Unit == "ns" && !Id.Contains("_ns", StringComparison.Ordinal) ? Id + "_ns" : Id;

    public double Of(CellSummary cell) => OfCell is { } figure ? figure(cell) : Spread.Of(cell.Succeeded.Select(Read)).Median;
}

/// <summary>
/// Every figure of a repetition the reports show or compare, in the order they show them: a new figure of what a
/// repetition records is its line here. The "Every cell" table (<see cref="CellColumns"/>), the suite comparison
/// (CellComparer) and the CSV (a column after the ones it has always had, <see cref="CsvReport"/>) read this list.
/// </summary>
public static class ReportMetrics
{
    public static IReadOnlyList<ReportMetric> All { get; } =
    [
        new("messages_per_second", "msg/s", r => r.MessagesPerSecond) { HigherIsBetter = true },
        new("bytes_per_second", "B/s", r => r.BytesPerSecond) { Header = "MB/s", Text = Megabytes, HigherIsBetter = true },
        new("daemon_cpu_percent", "%", r => r.DaemonCpuPercent) { Header = "CPU daemon", Text = Percent },
        new("agents_cpu_percent", "%", r => r.AgentsCpuPercent) { Header = "CPU agents", Text = Percent },
        new("daemon_cpu_ns_per_message", "ns", r => RepetitionStats.CpuNanosecondsPerMessage(r.DaemonCpuPercent, r.MessagesPerSecond))
        {
            Header = "CPU ns/msg daemon", Text = Whole, HigherIsBetter = false, OfCell = s => s.CpuNanosecondsPerMessage(s.DaemonCpuPercent.Median),
        },
        new("agents_cpu_ns_per_message", "ns", r => RepetitionStats.CpuNanosecondsPerMessage(r.AgentsCpuPercent, r.MessagesPerSecond))
        {
            Header = "CPU ns/msg agents", Text = Whole, HigherIsBetter = false, OfCell = s => s.CpuNanosecondsPerMessage(s.AgentsCpuPercent.Median),
        },
        new("latency_p50", "ns", r => r.Latency.P50) { Header = "p50 µs", Text = Micros, HigherIsBetter = false },
        new("latency_p99", "ns", r => r.Latency.P99) { Header = "p99 µs", Text = Micros, HigherIsBetter = false },
        new("latency_p999", "ns", r => r.Latency.P999) { Header = "p99.9 µs", Text = Micros },
        new("latency_p9999", "ns", r => r.Latency.P9999) { Header = "p99.99 µs", Text = Micros },
    ];

    /// <summary>The figures a comparison of two suites tests.</summary>
    public static IReadOnlyList<ReportMetric> Compared { get; } = [.. All.Where(m => m.HigherIsBetter is not null)];
}
