using System.Globalization;
using IpcBench.Tests.Shared;

namespace IpcBench.Reports.Tests;

/// <summary>
/// ReportMetrics.All is the one list of a repetition's figures: the cells table, the comparison of two suites and the
/// CSV each show every metric the list gives them, with the value the metric reads, and nothing the list does not.
/// </summary>
public sealed class ReportMetricsTests
{
    [Fact]
    public void TheCellsTable_HasAColumnPerMetricWithAHeader_InTheListsOrder()
    {
        Assert.Equal(ReportMetrics.All.Where(m => m.Header is not null).Select(m => m.Header), CellColumns.Figures.Select(c => c.Header));
        var cell = ReportSamples.Matrix("metrics").Cells[0];
        var p99 = ReportMetrics.All.Single(m => m.Id == "latency_p99");
        Assert.Equal(p99.Text(Median(cell.Repetitions.Where(r => r.Succeeded).Select(p99.Read))), CellColumns.Figures.Single(c => c.Header == p99.Header).Text(cell.Summary));
    }

    [Fact]
    public void AComparison_TestsEveryComparedMetric_AndNoOther()
    {
        var baseline = ReportSamples.Matrix("compared", repetitions: 5);
        var comparison = SuiteComparison.Compare(baseline, ReportSamples.Candidate(baseline), 5);

        var tested = comparison.Cells.SelectMany(c => c.Metrics).Select(m => m.Metric).Distinct().ToList();
        Assert.Equal(ReportMetrics.All.Where(m => m.HigherIsBetter is not null).Select(m => m.Id), tested);
        Assert.All(comparison.Cells.SelectMany(c => c.Metrics), m => Assert.Equal(ReportMetrics.All.Single(r => r.Id == m.Metric).Unit, m.Unit));
    }

    [Fact]
    public void TheCsv_HasAColumnPerMetric_WithEachRepetitionsOwnFigure_AndTheCellsOnTheMedianRow()
    {
        var report = ReportSamples.Matrix("csv metrics");
        var csv = CsvTable.Parse(CsvReport.Render(report));
        var cell = report.Cells[0];

        foreach (var metric in ReportMetrics.All)
        {
            Assert.Contains(metric.CsvColumn, csv.Header);
            var rows = csv.Rows.Where(r => csv.Get(r, "cell") == "0").ToList();
            foreach (var repetition in cell.Repetitions.Where(r => r.Succeeded))
            {
                var row = rows.Single(r => csv.Get(r, "scenario_id") == repetition.ScenarioId);
                Assert.Equal(metric.Read(repetition), double.Parse(csv.Get(row, metric.CsvColumn), CultureInfo.InvariantCulture), 6);
            }

            var median = rows.Single(r => csv.Get(r, "repetition") == "median");
            Assert.Equal(metric.Of(cell.Summary), double.Parse(csv.Get(median, metric.CsvColumn), CultureInfo.InvariantCulture), 6);
        }
    }

    private static double Median(IEnumerable<double> values) => Spread.Of(values).Median;
}
