using System.Globalization;
using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>One figure of the "Every cell" table: its header and its text from a cell's medians.</summary>
public sealed record CellColumn(string Header, Func<CellSummary, string> Text);

/// <summary>
/// The figures of the "Every cell" table, in order, as every format that draws the table shows them (Markdown and
/// HTML): a figure shown there is one line here. The columns around them (cell, runs, msg/s with its range, spread,
/// noise, modes, validity) are the table's own.
/// </summary>
public static class CellColumns
{
    public static IReadOnlyList<CellColumn> Figures { get; } =
    [
        new("MB/s", s => Megabytes(s.BytesPerSecond.Median)),
        new("CPU daemon", s => Percent(s.DaemonCpuPercent.Median)),
        new("CPU agents", s => Percent(s.AgentsCpuPercent.Median)),
        new("CPU ns/msg daemon", s => Whole(s.CpuNanosecondsPerMessage(s.DaemonCpuPercent.Median))),
        new("CPU ns/msg agents", s => Whole(s.CpuNanosecondsPerMessage(s.AgentsCpuPercent.Median))),
        new("p50 µs", s => Micros(s.LatencyP50.Median)),
        new("p99 µs", s => Micros(s.LatencyP99.Median)),
        new("p99.9 µs", s => Micros(s.LatencyP999.Median)),
        new("p99.99 µs", s => Micros(s.LatencyP9999.Median)),
    ];

    private static string Whole(double value) => value.ToString("0", CultureInfo.InvariantCulture);
}
