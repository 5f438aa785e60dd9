using System.Text.Json;
using IpcBench.Daemon.Control;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A report exported against a baseline: the "Compared with baseline" section in every format, and the same verdicts
/// as CompareSuites answers (one comparison, two views).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ReportComparisonTests
{
    private static readonly SuiteReport Baseline = ReportSamples.Matrix("baseline", ReportSamples.ComparedRepetitions);
    private static readonly SuiteReport Candidate = ReportSamples.Candidate(Baseline);
    private static readonly SuiteComparison Comparison = SuiteComparison.Compare(Baseline, Candidate, 5);

    [Fact]
    public void Comparison_GivesEachCellItsVerdict_AndCompareSuitesAnswersTheSame()
    {
        Assert.Equal(Verdict.Regressed, Comparison.Verdict);
        Assert.Equal(Baseline.Cells.Count, Comparison.Cells.Count);
        Assert.All(Comparison.Cells, c => Assert.Equal(
            c.Key.Transport switch { "uds" => Verdict.Regressed, "shm-ring" => Verdict.Improved, _ => Verdict.Same }, c.Verdict));
        var uds = Comparison.Cells.First(c => c.Key.Transport == "uds");
        Assert.Equal(-20, uds.MessagesPerSecond!.ChangePercent, 9);
        Assert.Equal(Verdict.Regressed, uds.LatencyP99!.Verdict);

        var proto = SuiteComparer.Compare(Baseline, Candidate, 5);
        Assert.Equal(ComparisonVerdict.Regressed, proto.Verdict);
        Assert.Equal(Comparison.Cells.Select(c => (int)c.Verdict), proto.Cells.Select(c => (int)c.Verdict));
        Assert.Equal(Comparison.Cells.SelectMany(c => c.Metrics.Select(m => m.ChangePercent)), proto.Cells.SelectMany(c => c.Metrics.Select(m => m.ChangePercent)));
        Assert.Equal("uds", proto.Cells.First(c => c.Verdict == ComparisonVerdict.Regressed).Spec.Transport);
    }

    [Fact]
    public void ReportJson_ReadBack_ComparesAsTheReportItWasWrittenFrom()
    {
        var read = ReportFile.Read(JsonReport.Render(Baseline));

        Assert.Equal(Baseline.SuiteId, read.SuiteId);
        Assert.Equal(Baseline.Environment, read.Environment);
        Assert.Equal(Baseline.Cells.Select(c => (c.Key, c.Duration, c.Warmup)), read.Cells.Select(c => (c.Key, c.Duration, c.Warmup)));
        var fromFile = SuiteComparison.Compare(read, Candidate, 5);
        Assert.Equal(Comparison.Verdict, fromFile.Verdict);
        Assert.Equal(Comparison.Cells.SelectMany(c => c.Metrics), fromFile.Cells.SelectMany(c => c.Metrics));
        Assert.Equal(Comparison.Notes, fromFile.Notes);
        Assert.All(SuiteComparison.Compare(read, Baseline, 5).Cells, c => Assert.Equal(Verdict.Same, c.Verdict));

        var e = Assert.Throws<InvalidDataException>(() => ReportFile.Read("{\"ids\":[]}"));
        Assert.Contains("not an IpcBench report.json", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Markdown_HasTheSection_WithFiguresChangeAndVerdictPerCell()
    {
        var markdown = MarkdownReport.Render(Candidate, Comparison);

        Assert.Contains("## Compared with baseline `suite-0002`", markdown, StringComparison.Ordinal);
        Assert.Contains("**REGRESSED** — Overall REGRESSED at a threshold of ±5 %: 3 regressed, 3 improved, 6 same of 12 cell(s) in both suites.",
            markdown, StringComparison.Ordinal);
        var uds = Comparison.Cells.First(c => c.Key.Transport == "uds" && c.Key.PayloadBytes == 1024);
        var rate = uds.MessagesPerSecond!;
        Assert.Contains($"| uds 1 KB 1:1 full | REGRESSED | {ReportFormatting.Count(rate.Baseline)} | {ReportFormatting.Count(rate.Candidate)} | −20.0 % |",
            markdown, StringComparison.Ordinal);
        Assert.Contains("| channels 8 B 1:1 full | SAME |", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("Compared with baseline", MarkdownReport.Render(Candidate), StringComparison.Ordinal);
    }

    [Fact]
    public void Csv_IsADocumentOfItsOwn_OneRowPerCellAndMetric_NamingBothSuites()
    {
        var table = CsvTable.Parse(CsvReport.RenderComparison(Comparison));

        Assert.Equal(["baseline_id", "candidate_id", "threshold_percent", "cell", "metric", "unit", "baseline", "candidate", "ratio", "change_percent",
            "verdict", "notes", "placement", "p_value", "shift_percent", "shift_ci_low_percent", "shift_ci_high_percent", "baseline_samples",
            "candidate_samples"], table.Header);
        Assert.Equal(1 + Comparison.Cells.Sum(c => c.Metrics.Count), table.Rows.Count);
        Assert.All(table.Rows, r => Assert.Equal(("suite-0002", Candidate.SuiteId, "5"),
            (table.Get(r, "baseline_id"), table.Get(r, "candidate_id"), table.Get(r, "threshold_percent"))));
        Assert.Equal("regressed", table.Get(table.Rows[0], "verdict"));
        Assert.Equal("all", table.Get(table.Rows[0], "cell"));
        var row = table.Rows.Single(r => table.Get(r, "cell") == "shm-ring 8 B 1:1 full" && table.Get(r, "metric") == "messages_per_second");
        Assert.Equal("improved", table.Get(row, "verdict"));
        Assert.Equal(20, double.Parse(table.Get(row, "change_percent"), System.Globalization.CultureInfo.InvariantCulture), 9);
        // A regression is a negative number, not text: the formula guard leaves it for a spreadsheet to sum.
        var uds = table.Rows.First(r => table.Get(r, "cell").StartsWith("uds ", StringComparison.Ordinal) && table.Get(r, "metric") == "messages_per_second");
        Assert.Equal(-20, double.Parse(table.Get(uds, "change_percent"), System.Globalization.CultureInfo.InvariantCulture), 9);
    }

    [Fact]
    public void Json_CarriesTheComparison_OnlyWhenThereIsABaseline()
    {
        using var json = JsonDocument.Parse(JsonReport.Render(Candidate, Comparison));
        var comparison = json.RootElement.GetProperty("comparison");

        Assert.Equal("suite-0002", comparison.GetProperty("baseline_id").GetString());
        Assert.Equal("regressed", comparison.GetProperty("verdict").GetString());
        var cells = comparison.GetProperty("cells").EnumerateArray().ToList();
        Assert.Equal(Comparison.Cells.Count, cells.Count);
        Assert.Equal("uds 8 B 1:1 full", cells.First(c => c.GetProperty("verdict").GetString() == "regressed").GetProperty("label").GetString());
        Assert.Equal(6, cells[0].GetProperty("metrics").GetArrayLength());

        using var plain = JsonDocument.Parse(JsonReport.Render(Candidate));
        Assert.False(plain.RootElement.TryGetProperty("comparison", out _));
    }

    [Fact]
    public void Html_HasTheSection_TheChartPlace_AndEncodesIds()
    {
        var hostile = SuiteComparison.Compare(Baseline with { SuiteId = "<b>base</b>" }, Candidate, 5);
        var html = HtmlReport.Render(Candidate, hostile);

        Assert.Contains("<section id=\"comparison\"><h2>Compared with baseline <code>&lt;b&gt;base&lt;/b&gt;</code></h2>", html, StringComparison.Ordinal);
        Assert.Contains("<div class=\"grid\" id=\"comparison-chart\"></div>", html, StringComparison.Ordinal);
        Assert.Contains("<td class=\"verdict regressed\">REGRESSED</td>", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<b>base", html, StringComparison.Ordinal);
        Assert.DoesNotContain("id=\"comparison\"", HtmlReport.Render(Candidate), StringComparison.Ordinal);
    }
}
