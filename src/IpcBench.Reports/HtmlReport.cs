using System.Reflection;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>
/// REPORT_FORMAT_HTML and `run --out`'s report.html: one file that opens from disk on a lab machine with no network.
/// Chart.js and its error-bar plugin (vendored from npm with their licences, Assets/) are inlined, with the
/// report as JSON beside them; Assets/report.js draws the charts. The tables are written here, every string encoded.
/// </summary>
public static class HtmlReport
{
    private static readonly Lazy<string> Scripts = new(() => string.Join("\n",
        Asset("chart.umd.min.js"), Asset("chartjs-chart-error-bars.umd.min.js"), Asset("figures.js"), Asset("report.js")));

    /// <summary>report.css, for other pages that should look like a report (the lab report of `run --daemons`).</summary>
    public static string Style => Asset("report.css");

    public static string Render(SuiteReport report, SuiteComparison? comparison = null)
    {
        var doc = ReportDocument.Build(report, comparison);
        var html = new StringBuilder();
        string title = report.Name.Length > 0 ? report.Name : report.SuiteId;
        html.Append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        // No network at all: the file must look the same on an air-gapped lab machine as here.
        html.Append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n");
        html.Append($"<title>IpcBench — {E(title)}</title>\n<style>\n{Style}\n</style>\n</head>\n<body>\n");
        html.Append($"<header>\n<h1>{E(title)}</h1>\n<p class=\"meta\">Suite <code>{E(report.SuiteId)}</code>, {E(report.State)}, " +
            $"{E(report.RepetitionsText)}, created {E(report.CreatedAt.ToString("u"))}");
        if (report.PresetId is not null)
        {
            html.Append($", preset <code>{E(report.PresetId)}</code>: {E(report.PresetTitle ?? string.Empty)}</p>\n<p class=\"meta\">{E(report.PresetReproduces ?? string.Empty)}");
        }

        html.Append("</p>\n");
        AppendEnvironment(html, report.Environment);
        html.Append("</header>\n");
        if (comparison is not null)
        {
            AppendComparison(html, comparison);
        }

        html.Append("<main id=\"charts\"></main>\n");
        if (doc.Published.Count > 0)
        {
            AppendPublished(html, doc.Published);
        }

        AppendCells(html, doc.Cells, doc.Placement?.Description ?? string.Empty);
        LoadTables.AppendHtml(html, doc.Load);
        AppendPrecision(html, report);
        // JsonSerializer's default encoder escapes <, > and & as \u003C etc., so no string can close this element.
        html.Append("<script type=\"application/json\" id=\"report-data\">")
            .Append(JsonSerializer.Serialize(doc, ReportDocument.JsonOptions))
            .Append("</script>\n<script>\n").Append(Scripts.Value).Append("\n</script>\n</body>\n</html>\n");
        return html.ToString();
    }

    internal static void AppendEnvironment(StringBuilder html, ReportEnvironment env)
    {
        html.Append("<table class=\"environment\"><tbody>\n");
        Row("Machine", $"{env.CpuModel}, {env.LogicalCores} logical cores");
        Row("Host", env.Hostname);
        Row("OS, kernel", $"{env.Os}, {env.Kernel}");
        Row(".NET, IpcBench", $"{env.DotnetVersion}, {env.BuildVersion}");
        if (env.CoreToCoreNanoseconds is { } ns)
        {
            Row("Core-to-core round trip", $"{ns:0} ns");
        }

        if (env.Clock.Length > 0)
        {
            Row("Clock", env.Clock);
        }

        html.Append("</tbody></table>\n");

        void Row(string name, string value) => html.Append($"<tr><th>{E(name)}</th><td>{E(value)}</td></tr>\n");
    }

    /// <summary>The baseline section: summary, a place for report.js's change chart, and the per-cell table.</summary>
    private static void AppendComparison(StringBuilder html, SuiteComparison c)
    {
        html.Append($"<section id=\"comparison\"><h2>Compared with baseline <code>{E(c.BaselineId)}</code></h2>\n" +
            $"<p class=\"verdict {E(VerdictName(c.Verdict).ToLowerInvariant())}\"><strong>{E(VerdictName(c.Verdict))}</strong> — {E(ComparisonSummary(c))} " +
            $"{ComparisonMethod}, candidate <code>{E(c.CandidateId)}</code>.</p>\n<div class=\"grid\" id=\"comparison-chart\"></div>\n" +
            "<table><thead><tr><th>Cell</th><th>Verdict</th><th>msg/s baseline</th><th>msg/s candidate</th><th>msg/s change</th><th>msg/s shift</th>" +
            "<th>p99 µs baseline</th><th>p99 µs candidate</th><th>p99 change</th><th>Beyond the threshold, notes</th></tr></thead><tbody>\n");
        foreach (var cell in c.Cells)
        {
            foreach (var (label, verdict, rate, p99, metrics) in Rows(cell))
            {
                string notes = RowNotes(metrics, cell.Notes);
                html.Append($"<tr><td>{E(label)}</td><td class=\"verdict {E(VerdictName(verdict).ToLowerInvariant())}\">{E(VerdictName(verdict))}</td>" +
                    $"<td>{Side(rate, true, Count)}</td><td>{Side(rate, false, Count)}</td><td>{E(SideChange(rate))}</td><td>{E(Shift(rate))}</td>" +
                    $"<td>{Side(p99, true, Micros)}</td><td>{Side(p99, false, Micros)}</td><td>{E(SideChange(p99))}</td>" +
                    $"<td class=\"method\">{E(notes)}</td></tr>\n");
            }
        }

        html.Append("</tbody></table>\n");
        foreach (var note in c.Notes)
        {
            html.Append($"<p class=\"note\">{E(note)}</p>\n");
        }

        html.Append("</section>\n");
    }

    private static void AppendPublished(StringBuilder html, IReadOnlyList<PublishedRow> rows)
    {
        html.Append("<section id=\"published-table\"><h2>Published vs measured</h2>\n<table><thead><tr><th>Reference</th><th>Published figure</th>" +
            "<th>Published</th><th>Our cell</th><th>Ours</th><th>Ratio</th><th>Spread</th><th>Method differences</th></tr></thead><tbody>\n");
        foreach (var r in rows)
        {
            string measured = r.MeasuredText;
            html.Append($"<tr><td>{E(r.Reference)}</td><td>{E(r.Label)}</td><td>{E(r.PublishedText)}</td><td>{E(r.CellLabel)}</td><td>{E(measured)}</td>" +
                $"<td>{(r.Ratio is { } ratio ? Ratio(ratio) : "–")}</td><td{(r.SpreadPercent > RepetitionStats.SpreadThresholdPercent ? " class=\"spread\"" : string.Empty)}>" +
                $"{(r.HasSpread ? $"{r.SpreadPercent:0.#} %" : "–")}</td><td class=\"method\">{E(r.MethodDifferences)}</td></tr>\n");
        }

        html.Append("</tbody></table></section>\n");
    }

    private static void AppendCells(StringBuilder html, IReadOnlyList<CellDocument> cells, string placements)
    {
        // As in Markdown: the column only when some cell had enough repetitions to tell; the note below says why not.
        bool modes = cells.Any(c => c.Modality.MessagesPerSecond.Kind != ModalityKind.TooFew);
        html.Append("<section id=\"cells-table\"><h2>Every cell (median, min–max over the repetitions)</h2>\n<table><thead><tr><th>Cell</th><th>Runs</th>" +
            "<th>msg/s</th><th>min–max</th>" + string.Concat(CellColumns.Figures.Select(c => $"<th>{E(c.Header)}</th>")) +
            $"<th>Spread</th><th>Noise</th>{(modes ? "<th>Modes</th>" : string.Empty)}<th>Validity</th></tr></thead><tbody>\n");
        foreach (var cell in cells)
        {
            var s = cell.Summary.Figures;
            string noise = cell.Noise.Noisy ? $"<td class=\"noisy\">{E(cell.Noise.Text)}</td>" : "<td>–</td>";
            string modality = (!modes ? string.Empty
                : $"<td{(cell.Modality.MessagesPerSecond.Kind == ModalityKind.Multimodal ? " class=\"modal\"" : string.Empty)}>{E(cell.Modality.Text)}</td>") +
                Validity(cell);
            html.Append($"<tr><td>{E(cell.Label)}</td><td>{s.Repetitions}{(s.Failed > 0 ? $" ({s.Failed} failed)" : string.Empty)}</td>" +
                $"<td>{Count(s.MessagesPerSecond.Median)}</td><td>{Count(s.MessagesPerSecond.Min)}–{Count(s.MessagesPerSecond.Max)}</td>" +
                string.Concat(CellColumns.Figures.Select(c => $"<td>{E(c.Text(s))}</td>")) +
                $"<td{(s.SpreadExceeded ? " class=\"spread\"" : string.Empty)}>{(s.Repetitions > 1 ? $"{s.SpreadPercent:0.#} %" : "–")}</td>{noise}{modality}</tr>\n");
        }

        html.Append("</tbody></table>\n");
        html.Append($"<p class=\"note\" id=\"modality-note\">Modes: the msg/s repetitions of a cell form two or more groups when the groups meeting at a " +
            $"gap sit {Modality.MinimumDisparity:0} or more of their spreads apart (Pragmastat's disparity); {Modality.MinimumRepetitions} or more " +
            "successful repetitions are needed to tell. \"By placement\": each mode ran in a placement class of its own, so the modes are where the " +
            $"vCPUs sat, not the transport; {E(placements)}.</p>\n</section>\n");
    }

    /// <summary>The cell's validity: "valid", or which rounds were not, each issue's figures in the cell's tooltip and list.</summary>
    private static string Validity(CellDocument cell)
    {
        var invalid = cell.Repetitions.Where(r => r.Succeeded && !r.Valid).ToList();
        if (invalid.Count == 0)
        {
            return "<td>valid</td>";
        }

        var items = invalid.SelectMany(r => r.Validity!.Select(v => $"<li>round {r.Round}: {E(v.Text)}</li>"));
        return $"<td class=\"invalid\">{E(cell.Validity.Text)}<ul>{string.Concat(items)}</ul></td>";
    }

    private static void AppendPrecision(StringBuilder html, SuiteReport report)
    {
        var rows = PrecisionRow.All(report);
        if (rows.Count == 0)
        {
            return;
        }

        bool adaptive = report.Adaptive is not null;
        html.Append("<section id=\"precision-table\"><h2>Precision of the medians</h2>\n<table><thead><tr><th>Cell</th><th>Rounds</th><th>msg/s median</th>" +
            $"<th>± (95 % CI)</th>{(adaptive ? "<th>Stopped</th>" : string.Empty)}</tr></thead><tbody>\n");
        foreach (var r in rows)
        {
            html.Append($"<tr><td>{E(r.CellLabel)}</td><td>{r.Rounds}{(r.Failed > 0 ? $" ({r.Failed} failed)" : string.Empty)}</td><td>{Count(r.Median)}</td>" +
                $"<td>{E(r.PrecisionText)}</td>{(adaptive ? $"<td>{E(r.StopText)}</td>" : string.Empty)}</tr>\n");
        }

        html.Append($"</tbody></table>\n<p class=\"note\">{E(PrecisionRow.Note(report))}</p></section>\n");
    }

    private static string E(string value) => HtmlEncoder.Default.Encode(value);

    /// <summary>An embedded asset; a source-map comment is dropped, as the map is not shipped and the file must not reach out.</summary>
    internal static string Asset(string name)
    {
        using var stream = typeof(HtmlReport).Assembly.GetManifestResourceStream("IpcBench.Reports." + name)
            ?? throw new InvalidOperationException($"report asset {name} is not embedded in {typeof(HtmlReport).Assembly.GetName().Name}");
        using var reader = new StreamReader(stream, Encoding.UTF8);
        var lines = reader.ReadToEnd().Split('\n').Where(l => !l.StartsWith("//# sourceMappingURL=", StringComparison.Ordinal));
        return string.Join('\n', lines);
    }
}
