namespace IpcBench.Reports;

/// <summary>One figure of the "Every cell" table: its header and its text from a cell's summary.</summary>
public sealed record CellColumn(string Header, Func<CellSummary, string> Text);

/// <summary>
/// The figures of the "Every cell" table, in order, as every format that draws the table shows them (Markdown and
/// HTML): the metrics of <see cref="ReportMetrics.All"/> with a header. The columns around them (cell, runs, msg/s with
/// its range, spread, noise, modes, validity) are the table's own.
/// </summary>
public static class CellColumns
{
    public static IReadOnlyList<CellColumn> Figures { get; } =
        [.. ReportMetrics.All.Where(m => m.Header is not null).Select(m => new CellColumn(m.Header!, s => m.Text(m.Of(s))))];
}
