namespace IpcBench.Reports;

/// <summary>REPORT_FORMAT_JSON: the whole <see cref="ReportDocument"/>, snake_case like the proto JSON users already read (with a baseline, its "comparison").</summary>
public static class JsonReport
{
    public static string Render(SuiteReport report, SuiteComparison? comparison = null) => ReportDocument.Build(report, comparison).ToJson();
}
