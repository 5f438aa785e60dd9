using System.Text.Json;
using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>Latency against load in Markdown, CSV and JSON, from <see cref="ReportSamples.Load"/>'s sweep and searches.</summary>
public sealed class LoadReportTests
{
    [Fact]
    public void Curves_GroupByPayloadAndShape_SweepCellsAndProbes_ClosedLoopLeftOut()
    {
        var chart = Assert.Single(LoadCurves.Of(ReportSamples.Load()));

        Assert.Equal("1 KB, 1:1, full, stream", chart.Title);
        Assert.Equal(["uds", "shm-ring", "tcp"], chart.Series.Select(s => s.Transport));
        Assert.Equal([1e3, 1e4, 1e5], chart.Series[0].Points.Select(p => p.OfferedPerPublisher));
        Assert.Equal([2.5e3, 1e4, 4e4, 8e4], chart.Series[1].Points.Select(p => p.OfferedPerPublisher));
        Assert.Equal(4e4, chart.Series[1].SustainableRatePerPublisher);
        Assert.Null(chart.Series[2].SustainableRatePerPublisher);
        // A matrix at one rate has no load to plot against.
        Assert.Empty(LoadCurves.Of(ReportSamples.Matrix("plain", 1)));
    }

    [Fact]
    public void Curves_OfTransportsInDifferentWaits_ShareOneChart_TheWaitNamedPerSeries()
    {
        // As a suite records the waits the transports default to: uds and tcp block, shm-ring yield.
        var resolved = ReportSamples.ResolvedWaits(ReportSamples.Load());

        var chart = Assert.Single(LoadCurves.Of(resolved));
        Assert.Equal("1 KB, 1:1, full, stream", chart.Title);
        Assert.Equal(["uds (block)", "shm-ring (yield)", "tcp (block)"], chart.Series.Select(s => s.Name));
        Assert.Equal([CellWait.Block, CellWait.Yield, CellWait.Block], chart.Series.Select(s => s.Wait));
        var text = MarkdownReport.Render(resolved);
        Assert.Contains("| uds (block) | 100.0 K | 100.0 K | 40 | 120 | 240 | 1200 |", text, StringComparison.Ordinal);
        Assert.Contains("- shm-ring (yield): sustainable 40.0 K msg/s per publisher", text, StringComparison.Ordinal);
    }

    [Fact]
    public void Markdown_TablesEveryPoint_AndEachSustainableRate()
    {
        var text = MarkdownReport.Render(ReportSamples.Load());

        Assert.Contains("## Latency against load — 1 KB, 1:1, full, stream", text, StringComparison.Ordinal);
        Assert.Contains("| uds | 100.0 K | 100.0 K | 40 | 120 | 240 | 1200 |", text, StringComparison.Ordinal);
        // The failing probe: 900 µs p50, 2.7 ms p99, its sender 800 µs late at p99.
        Assert.Contains("| shm-ring | 80.0 K | 72.0 K | 900 | 2700 | 5400 | 27000 | 800 |", text, StringComparison.Ordinal);
        Assert.Contains("| shm-ring | 2.5 K | 2.5 K | 2.00 | 6.00 | 12 | 60 | 1.50 |", text, StringComparison.Ordinal);
        Assert.Contains("| uds | 1.0 K | 1.0 K | 9.00 | 27 | 54 | 270 | – |", text, StringComparison.Ordinal);
        Assert.Contains("failed: latency p99 2.7 ms above the bound 1 ms |", text, StringComparison.Ordinal);
        Assert.Contains("- shm-ring: sustainable 40.0 K msg/s per publisher (the probe at 80.0 K failed); max_steps (4) reached", text, StringComparison.Ordinal);
        Assert.Contains("- tcp: no sustainable rate: the lowest probe (469 msg/s per publisher) failed", text, StringComparison.Ordinal);
        Assert.DoesNotContain("Latency against load", MarkdownReport.Render(ReportSamples.Matrix("plain", 1)), StringComparison.Ordinal);
    }

    [Fact]
    public void Csv_CarriesRates_ProbeRows_AndTheSearchResult()
    {
        var csv = CsvTable.Parse(CsvReport.Render(ReportSamples.Load()));

        Assert.Equal(["1000", "10000", "100000"], csv.Rows.Where(r => csv.Get(r, "transport") == "uds" && csv.Get(r, "repetition") == "median")
            .Select(r => csv.Get(r, "rate_per_publisher")));
        var probes = csv.Rows.Where(r => csv.Get(r, "repetition") == "probe").ToList();
        Assert.Equal(5, probes.Count);
        Assert.Equal(["true", "true", "true", "false", "false"], probes.Select(r => csv.Get(r, "probe_passed")));
        Assert.Equal("latency p99 2.7 ms above the bound 1 ms", csv.Get(probes[3], "probe_reason"));
        Assert.Equal("800000", csv.Get(probes[3], "sender_lag_p99_ns"));
        var shm = csv.Rows.Single(r => csv.Get(r, "transport") == "shm-ring" && csv.Get(r, "repetition") == "median");
        Assert.Equal("40000", csv.Get(shm, "sustainable_rate_per_publisher"));
        Assert.StartsWith("max_steps (4) reached", csv.Get(shm, "rate_search_result"), StringComparison.Ordinal);
    }

    [Fact]
    public void Json_CarriesTheKeyRate_TheSearch_AndTheCurves()
    {
        using var json = JsonDocument.Parse(JsonReport.Render(ReportSamples.Load()));
        var cells = json.RootElement.GetProperty("cells").EnumerateArray().ToList();

        Assert.Equal(10000, cells[1].GetProperty("key").GetProperty("rate_per_publisher").GetDouble());
        var search = cells[3].GetProperty("rate_search");
        Assert.Equal(40000, search.GetProperty("sustainable_rate_per_publisher").GetDouble());
        Assert.Equal(4, search.GetProperty("probes").GetArrayLength());
        Assert.False(cells[0].TryGetProperty("rate_search", out _));
        Assert.Equal(3, json.RootElement.GetProperty("load")[0].GetProperty("series").GetArrayLength());
    }

    [Fact]
    public void ReportJson_ReadBack_KeepsTheSearch_SoCompareHtmlStillShowsTheProbes()
    {
        var report = ReportSamples.Load();

        var back = ReportFile.Read(JsonReport.Render(report));

        Assert.Equal(report.Cells.Select(c => c.Search?.SustainableRatePerPublisher), back.Cells.Select(c => c.Search?.SustainableRatePerPublisher));
        Assert.Equal(report.Cells[3].Search!.Probes.Select(p => (p.RatePerPublisher, p.Passed, p.Reason)),
            back.Cells[3].Search!.Probes.Select(p => (p.RatePerPublisher, p.Passed, p.Reason)));
    }
}
