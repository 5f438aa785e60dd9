using System.Text;
using System.Text.Encodings.Web;
using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>
/// The "latency against load" tables (<see cref="LoadCurves"/>) in Markdown and HTML: a row per offered rate and
/// transport, and each transport's sustainable rate with the search's result. report.js draws the same data as a chart.
/// Nothing is written for a suite without a load to plot against.
/// </summary>
public static class LoadTables
{
    /// <summary>The figures of a row, in order, as both formats show them: a figure shown there is one line here.</summary>
    public static IReadOnlyList<(string Header, Func<LoadPoint, string> Text)> Figures { get; } =
    [
        ("Offered msg/s per publisher", p => Count(p.OfferedPerPublisher)),
        ("Delivered msg/s", p => Count(p.DeliveredPerSecond)),
        ("p50 µs", p => Micros(p.P50)),
        ("p99 µs", p => Micros(p.P99)),
        ("p99.9 µs", p => Micros(p.P999)),
        ("max µs", p => Micros(p.Max)),
        ("Sender lag p99 µs", Lag),
        ("CPU ns/msg", p => Whole(p.CpuNanosecondsPerMessage)),
    ];

    public const string Note = "Offered rate per publisher (log axis in the chart); latency from each message's intended send time, so a publisher " +
        "falling behind shows as latency (no coordinated omission); CPU per delivered message, daemon and agents together. " +
        "A probe passes when it delivers the search's share of the offered rate with p99 (from intended send times, a late publisher included) within its bound and its receivers do not fall behind.";

    public static void AppendMarkdown(StringBuilder text, SuiteReport report)
    {
        foreach (var chart in LoadCurves.Of(report))
        {
            text.AppendLine($"## Latency against load — {MarkdownReport.Escape(chart.Title)}");
            text.AppendLine();
            text.AppendLine("| Transport |" + string.Concat(Figures.Select(f => $" {f.Header} |")) + " Probe |");
            text.AppendLine("|---|" + string.Concat(Figures.Select(_ => "---|")) + "---|");
            foreach (var (series, p) in Rows(chart))
            {
                text.AppendLine($"| {MarkdownReport.Escape(series.Name)} |" + string.Concat(Figures.Select(f => $" {f.Text(p)} |")) +
                    $" {MarkdownReport.Escape(Verdict(p))} |");
            }

            text.AppendLine();
            foreach (var series in chart.Series.Where(s => s.SearchResult.Length > 0))
            {
                text.AppendLine($"- {MarkdownReport.Escape(series.Name)}: {MarkdownReport.Escape(Sustainable(series))}");
            }

            text.AppendLine();
            text.AppendLine(Note);
            text.AppendLine();
        }
    }

    public static void AppendHtml(StringBuilder html, IReadOnlyList<LoadChart> charts)
    {
        if (charts.Count == 0)
        {
            return;
        }

        html.Append("<section id=\"load-table\"><h2>Latency against load</h2>\n");
        foreach (var chart in charts)
        {
            html.Append($"<h3>{E(chart.Title)}</h3>\n<table><thead><tr><th>Transport</th>" + string.Concat(Figures.Select(f => $"<th>{E(f.Header)}</th>")) +
                "<th>Probe</th></tr></thead><tbody>\n");
            foreach (var (series, p) in Rows(chart))
            {
                html.Append($"<tr><td>{E(series.Name)}</td>" + string.Concat(Figures.Select(f => $"<td>{E(f.Text(p))}</td>")) +
                    $"<td{(p.Passed == false ? " class=\"failed-probe\"" : string.Empty)}>{E(Verdict(p))}</td></tr>\n");
            }

            html.Append("</tbody></table>\n<ul class=\"sustainable\">\n");
            foreach (var series in chart.Series.Where(s => s.SearchResult.Length > 0))
            {
                html.Append($"<li>{E(series.Name)}: {E(Sustainable(series))}</li>\n");
            }

            html.Append("</ul>\n");
        }

        html.Append($"<p class=\"note\">{E(Note)}</p>\n</section>\n");
    }

    /// <summary>"sustainable 12.3 K msg/s per publisher (the probe at 13.0 K failed); bracketed within 5 % after 7 probes", or why none.</summary>
    public static string Sustainable(LoadSeries s) => s.SustainableRatePerPublisher is { } rate
        ? $"sustainable {Count(rate)} msg/s per publisher{(s.BracketHigh is { } high ? $" (the probe at {Count(high)} failed)" : string.Empty)}; {s.SearchResult}"
        : s.SearchResult;

    private static IEnumerable<(LoadSeries Series, LoadPoint Point)> Rows(LoadChart chart) =>
        chart.Series.SelectMany(s => s.Points.Select(p => (s, p)));

    private static string Lag(LoadPoint p) => p.SenderLagP99 is { } lag ? Micros(lag) : "–";

    private static string Verdict(LoadPoint p) => p.Passed switch
    {
        true => "passed",
        false => "failed: " + p.Reason,
        null => "sweep",
    };

    private static string E(string value) => HtmlEncoder.Default.Encode(value);
}
