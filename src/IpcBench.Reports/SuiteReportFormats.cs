namespace IpcBench.Reports;

/// <summary>
/// One format a suite report is written in (BenchmarkDotNet's IExporter): ExportSuite serves it by <see cref="Id"/>
/// (REPORT_FORMAT_ plus the id in capitals) and `run --out` writes its file. A new format is its renderer (a file here),
/// one line in <see cref="SuiteReportFormats.All"/> and its value in control.proto's ReportFormat.
/// </summary>
public interface ISuiteReportFormat
{
    /// <summary>Lower case, the proto value's name without its prefix: "json" for REPORT_FORMAT_JSON.</summary>
    string Id { get; }

    string ContentType { get; }

    /// <summary>The file it is saved as: report.json.</summary>
    string FileName { get; }

    /// <summary>The report, with the baseline's comparison where the format has a place for it.</summary>
    string Render(SuiteReport report, SuiteComparison? comparison);

    /// <summary>The comparison as a document of its own, for a format with no place for it inside the report; else null.</summary>
    string? RenderComparison(SuiteComparison comparison) => null;
}

/// <summary>Every suite report format, in the order ExportSuite's refusal lists them; the first is the default.</summary>
public static class SuiteReportFormats
{
    public static IReadOnlyList<ISuiteReportFormat> All { get; } =
    [
        new Format("json", "application/json", "report.json", JsonReport.Render),
        // A CSV reader takes one table per file: the comparison is a document of its own.
        new Format("csv", "text/csv", "report.csv", (report, _) => CsvReport.Render(report), CsvReport.RenderComparison),
        new Format("markdown", "text/markdown", "report.md", MarkdownReport.Render),
        new Format("html", "text/html", "report.html", HtmlReport.Render),
    ];

    public static ISuiteReportFormat Default => All[0];

    /// <summary>The format of this id, or null when none is registered under it.</summary>
    public static ISuiteReportFormat? Find(string id) => All.FirstOrDefault(f => string.Equals(f.Id, id, StringComparison.Ordinal));

    private sealed record Format(
        string Id, string ContentType, string FileName, Func<SuiteReport, SuiteComparison?, string> Renderer,
        Func<SuiteComparison, string>? ComparisonRenderer = null) : ISuiteReportFormat
    {
        public string Render(SuiteReport report, SuiteComparison? comparison) => Renderer(report, comparison);

        public string? RenderComparison(SuiteComparison comparison) => ComparisonRenderer?.Invoke(comparison);
    }
}
