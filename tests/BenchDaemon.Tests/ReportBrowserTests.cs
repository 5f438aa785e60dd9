using System.Text.Json;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The HTML report in real headless Chromium (Debian's, driven by playwright-core), opened from disk with every network
/// request refused: no console or page error, every chart kind present, every dataset of every chart laid out by
/// Chart.js; the screenshot and the file are kept in TestResults/report/.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ReportBrowserTests(ITestOutputHelper output)
{
    private static readonly string[] ChartKinds = ["throughput", "bandwidth", "latency", "cpu", "spread", "strip", "published", "timeline"];

    [ChromiumFact]
    public async Task PresetReport_OpensOffline_WithEveryChartDrawn()
    {
        // A preset suite of three transports x four payloads x two accesses, three rounds, one failed run, and a name to escape.
        var report = ReportSamples.Preset("reference-1", repetitions: 3, name: "<script>alert('x')</script> & lab \"A\"");
        var (result, screenshot) = await OpenCleanAsync("report", HtmlReport.Render(report));
        using var _ = result;
        var root = result.RootElement;
        var charts = root.GetProperty("charts").EnumerateArray().ToList();
        Assert.Equal(root.GetProperty("canvases").GetInt32(), charts.Count);
        Assert.Equal(charts.Count.ToString(System.Globalization.CultureInfo.InvariantCulture), root.GetProperty("chartsAttribute").GetString());
        Assert.Equal(ChartKinds.Order(), charts.Select(c => c.GetProperty("kind").GetString()!).Distinct().Order());

        // Every chart sized, and each of its datasets has every data point laid out (a null bar on a log axis is not drawn).
        foreach (var chart in charts)
        {
            string title = chart.GetProperty("title").GetString()!;
            Assert.True(chart.GetProperty("width").GetInt32() > 0 && chart.GetProperty("height").GetInt32() > 0, title);
            var datasets = chart.GetProperty("datasets").EnumerateArray().ToList();
            Assert.True(datasets.Count > 0, $"{title}: no dataset");
            foreach (var dataset in datasets)
            {
                string what = $"{title} / {dataset.GetProperty("label").GetString()}";
                Assert.True(dataset.GetProperty("visible").GetBoolean(), what);
                Assert.True(dataset.GetProperty("points").GetInt32() > 0, $"{what}: no data");
                Assert.Equal(dataset.GetProperty("points").GetInt32(), dataset.GetProperty("elements").GetInt32());
                Assert.True(dataset.GetProperty("drawn").GetInt32() > 0, $"{what}: nothing drawn");
            }
        }

        // 24 cells in two shapes: per shape msg/s, MB/s, CPU and spread, a latency chart per payload, a timeline per cell.
        Assert.Equal(2, charts.Count(c => c.GetProperty("kind").GetString() == "throughput"));
        Assert.Equal(8, charts.Count(c => c.GetProperty("kind").GetString() == "latency"));
        Assert.Equal(24, charts.Count(c => c.GetProperty("kind").GetString() == "timeline"));
        Assert.Equal(2, charts.Count(c => c.GetProperty("kind").GetString() == "strip"));
        Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is (nearly) empty");
    }

    [ChromiumFact]
    public async Task QuickMatrixReport_DrawsEveryTransportOnOneChart_TickedAtThePayloadsMeasured()
    {
        // Five transports in the waits they default to (uds and tcp block, the rest yield) at four payloads, 1:1 FULL.
        var report = ReportSamples.QuickMatrix();
        var (result, screenshot) = await OpenCleanAsync("quick-matrix", HtmlReport.Render(report));
        using var _ = result;
        var charts = result.RootElement.GetProperty("charts").EnumerateArray().ToList();
        string[] series = ["channels (yield)", "iceoryx2 (yield)", "shm-ring (yield)", "tcp (block)", "uds (block)"];
        string[] payloads = ["8 B", "1 KB", "64 KB", "512 KB"];
        foreach (var kind in new[] { "throughput", "bandwidth" })
        {
            // One chart for the one shape whatever the waits, a series per transport, each with a point per payload laid out.
            var chart = Assert.Single(charts, c => c.GetProperty("kind").GetString() == kind);
            Assert.Equal((kind == "throughput" ? "msg/s" : "MB/s") + " — 1:1, full, stream", chart.GetProperty("title").GetString());
            var datasets = chart.GetProperty("datasets").EnumerateArray().ToList();
            Assert.Equal(series, datasets.Select(d => d.GetProperty("label").GetString()).Order());
            Assert.All(datasets, d => Assert.Equal((4, 4), (d.GetProperty("points").GetInt32(), d.GetProperty("drawn").GetInt32())));
            // Colour tells the transports apart, marker and dash the waits.
            Assert.Equal(5, datasets.Select(d => d.GetProperty("colour").GetString()).Distinct().Count());
            var style = datasets.GroupBy(d => d.GetProperty("label").GetString()!.EndsWith("(block)", StringComparison.Ordinal))
                .ToDictionary(g => g.Key, g => g.Select(d => $"{d.GetProperty("pointStyle").GetString()} {d.GetProperty("dash")}").Distinct().Single());
            Assert.NotEqual(style[true], style[false]);
            Assert.Equal(payloads, chart.GetProperty("xTicks").EnumerateArray().Select(t => t.GetString()));
        }

        // A latency chart per payload, every transport on it.
        var latency = charts.Where(c => c.GetProperty("kind").GetString() == "latency").ToList();
        Assert.Equal(payloads.Select(p => $"Latency — 1:1, full, stream, {p}"), latency.Select(c => c.GetProperty("title").GetString()));
        Assert.All(latency, c => Assert.Equal(series, c.GetProperty("datasets").EnumerateArray().Select(d => d.GetProperty("label").GetString()).Order()));
        Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is (nearly) empty");
    }

    [ChromiumFact]
    public async Task LoadReport_DrawsLatencyAgainstLoad_WithTheSustainableRateMarked()
    {
        // In the waits a suite records: shm-ring yield, uds and tcp block, on one chart all the same.
        var (result, _) = await OpenCleanAsync("load", HtmlReport.Render(ReportSamples.ResolvedWaits(ReportSamples.Load())));
        using var _ = result;
        var root = result.RootElement;
        var chart = Assert.Single(root.GetProperty("charts").EnumerateArray(), c => c.GetProperty("kind").GetString() == "load");
        Assert.Equal("Latency against load — 1 KB, 1:1, full, stream", chart.GetProperty("title").GetString());
        var datasets = chart.GetProperty("datasets").EnumerateArray().ToDictionary(d => d.GetProperty("label").GetString()!);
        Assert.Equal(["shm-ring (yield) p50", "shm-ring (yield) p99", "shm-ring (yield) p99.9", "shm-ring (yield) sustainable", "tcp (block) p50",
            "tcp (block) p99", "tcp (block) p99.9", "uds (block) p50", "uds (block) p99", "uds (block) p99.9"], datasets.Keys.Order());
        // A point per offered rate (uds' three cells, shm-ring's four probes, tcp's one), each laid out on the log axes.
        foreach (var (label, points) in new[] { ("uds (block) p99", 3), ("shm-ring (yield) p50", 4), ("tcp (block) p99.9", 1), ("shm-ring (yield) sustainable", 2) })
        {
            Assert.Equal(points, datasets[label].GetProperty("points").GetInt32());
            Assert.Equal(points, datasets[label].GetProperty("drawn").GetInt32());
        }

        // The dash is the percentile's, so the marker alone tells the waits apart.
        string Marker(string label) => datasets[label].GetProperty("pointStyle").GetString()!;
        Assert.Equal(Marker("uds (block) p50"), Marker("tcp (block) p99"));
        Assert.NotEqual(Marker("uds (block) p50"), Marker("shm-ring (yield) p50"));

        var table = Assert.Single(root.GetProperty("sections").EnumerateArray(), s => s.GetProperty("id").GetString() == "load-table").GetProperty("text").GetString()!;
        Assert.Contains("shm-ring (yield): sustainable 40.0 K msg/s per publisher (the probe at 80.0 K failed)", table, StringComparison.Ordinal);
        Assert.Contains("tcp (block): no sustainable rate: the lowest probe (469 msg/s per publisher) failed", table, StringComparison.Ordinal);
        Assert.Contains("failed: latency p99 2.7 ms above the bound 1 ms", table, StringComparison.Ordinal);
    }

    [ChromiumFact]
    public async Task ComparedReport_DrawsTheChangeChart_ColouredByVerdict()
    {
        // uds regressed, shm-ring improved, the rest the same (ReportSamples.Candidate), against the plain matrix.
        var baseline = ReportSamples.Matrix("baseline", ReportSamples.ComparedRepetitions);
        var candidate = ReportSamples.Candidate(baseline);
        var comparison = SuiteComparison.Compare(baseline, candidate, 5);
        var (result, screenshot) = await OpenCleanAsync("compared", HtmlReport.Render(candidate, comparison));
        using var _ = result;
        var root = result.RootElement;
        var chart = Assert.Single(root.GetProperty("charts").EnumerateArray(), c => c.GetProperty("kind").GetString() == "comparison");
        Assert.True(chart.GetProperty("width").GetInt32() > 0 && chart.GetProperty("height").GetInt32() > 0);
        var datasets = chart.GetProperty("datasets").EnumerateArray().ToList();
        Assert.Equal(["msg/s change %", "threshold +5 %", "threshold −5 %"], datasets.Select(d => d.GetProperty("label").GetString()));
        foreach (var dataset in datasets)
        {
            // A bar (or band point) per cell, each laid out.
            Assert.Equal(comparison.Cells.Count, dataset.GetProperty("points").GetInt32());
            Assert.Equal(comparison.Cells.Count, dataset.GetProperty("drawn").GetInt32());
            Assert.True(dataset.GetProperty("visible").GetBoolean());
        }

        var colours = datasets[0].GetProperty("colours").EnumerateArray().Select(c => c.GetString()).ToList();
        var byVerdict = comparison.Cells.Select((c, i) => (c.Verdict, Colour: colours[i])).GroupBy(p => p.Verdict).ToDictionary(g => g.Key, g => g.Select(p => p.Colour).Distinct().Single());
        Assert.Equal(3, byVerdict.Values.Distinct().Count());
        Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is (nearly) empty");
    }

    [ChromiumFact]
    public async Task PlacementsReport_DrawsEveryRepetition_ColouredByItsPlacement()
    {
        // Rounds 1, 3, 4 near and 2, 5, 6 far, shm-ring and channels bimodal by placement (ReportSamples.Placements).
        var report = ReportSamples.Placements();
        var (result, screenshot) = await OpenCleanAsync("placements", HtmlReport.Render(report));
        using var _ = result;
        var strip = Assert.Single(result.RootElement.GetProperty("charts").EnumerateArray(), c => c.GetProperty("kind").GetString() == "strip");
        Assert.True(strip.GetProperty("width").GetInt32() > 0 && strip.GetProperty("height").GetInt32() > 0);
        var datasets = strip.GetProperty("datasets").EnumerateArray().ToList();

        Assert.Equal(["near", "far"], datasets.Select(d => d.GetProperty("label").GetString()));
        // Every repetition a point, each laid out: 3 near and 3 far per cell.
        Assert.All(datasets, d => Assert.Equal((9, 9, 9), (d.GetProperty("points").GetInt32(), d.GetProperty("elements").GetInt32(), d.GetProperty("drawn").GetInt32())));
        Assert.Equal(2, datasets.Select(d => d.GetProperty("colour").GetString()).Distinct().Count());
        Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is (nearly) empty");
    }

    [ChromiumFact]
    public async Task ComparedPlacements_ShowStrataPValuesShiftsModesAndValidity_AsRendered()
    {
        // Near and far rounds in both suites; shm-ring 20 % faster, uds 20 % slower; one candidate uds round invalid.
        // Two runs pooled: 6 near and 6 far repetitions a side, enough for the rank tests.
        var baseline = ReportFile.Pool("baseline", [ReportSamples.Placements(), ReportSamples.Placements()]);
        var slower = ReportSamples.Candidate(baseline, "suite-0005");
        var candidate = slower with
        {
            Cells = [.. slower.Cells.Select(c => c.Key.Transport != "uds" ? c : c with
            {
                Repetitions = [.. c.Repetitions.Select(r => r.Round != 2 ? r
                    : r with { Validity = [new ValidityIssue("noise_above_limit", "other processes used 12.0 % of the machine while measuring")] })],
            })],
        };
        var comparison = SuiteComparison.Compare(baseline, candidate, 5);
        var (result, _) = await OpenCleanAsync("compared-placements", HtmlReport.Render(candidate, comparison));
        using var __ = result;
        string Section(string id) => result.RootElement.GetProperty("sections").EnumerateArray()
            .Single(s => s.GetProperty("id").GetString() == id).GetProperty("text").GetString()!;

        string compared = Section("comparison");
        output.WriteLine(compared);
        // Strata: a row per placement class, the boundary named; shm-ring's far rows decided with p and the shift's interval.
        Assert.Contains("shm-ring 8 B 1:1 full (near)", compared, StringComparison.Ordinal);
        Assert.Contains("shm-ring 8 B 1:1 full (far)", compared, StringComparison.Ordinal);
        Assert.Contains("placement classes by core-to-core probe: near up to", compared, StringComparison.Ordinal);
        Assert.Matches(@"\+20\.0 % \[\+[0-9.]+, \+[0-9.]+\]", compared);
        // The far class of uds holds the flagged round: a 12 % noise share could explain a shift of this size, so the round
        // is left out, the valid ones decide, and the note says what the flag cost.
        Assert.Contains("repetitions the validity flags cost (left out where they could explain the difference): noise above limit: 0 + 1 repetition (baseline + candidate)",
            compared, StringComparison.Ordinal);
        Assert.Contains("uds 8 B 1:1 full (far)\tREGRESSED", compared, StringComparison.Ordinal);
        string cells = Section("cells-table");
        Assert.Contains("invalid: round 2 (noise above limit)", cells, StringComparison.Ordinal);
        Assert.Contains("round 2: noise above limit: other processes used 12.0 % of the machine while measuring", cells, StringComparison.Ordinal);
        Assert.Contains("bimodal by placement", cells, StringComparison.Ordinal);
    }

    /// <summary>
    /// Writes <paramref name="page"/> to TestResults/report/NAME.html, opens it in Chromium (screenshot NAME.png beside
    /// it) and asserts it opened clean: no page or console error, no network request.
    /// </summary>
    private async Task<(JsonDocument Result, string Screenshot)> OpenCleanAsync(string name, string page)
    {
        var directory = Path.Combine(RepoLayout.Root, "TestResults", "report");
        Directory.CreateDirectory(directory);
        var html = Path.Combine(directory, name + ".html");
        var screenshot = Path.Combine(directory, name + ".png");
        await File.WriteAllTextAsync(html, page);

        var line = await ChromiumTools.CheckAsync(html, screenshot);
        output.WriteLine($"report {html}, screenshot {screenshot}");
        var result = JsonDocument.Parse(line);
        var root = result.RootElement;
        Assert.Empty(Strings(root, "pageErrors"));
        Assert.Empty(Strings(root, "consoleErrors"));
        Assert.Empty(Strings(root, "refused"));
        return (result, screenshot);
    }

    private static List<string> Strings(JsonElement root, string name) =>
        root.GetProperty(name).EnumerateArray().Select(e => e.GetString() ?? string.Empty).ToList();
}
