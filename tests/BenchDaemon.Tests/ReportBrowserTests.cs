using System.Text.Json;
using IpcBench.Daemon.Reports;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The HTML report in real headless Chromium (Debian's, driven by playwright-core), opened from disk with every network
/// request refused: no console or page error, every chart kind present, every dataset of every chart laid out by
/// Chart.js; the screenshot and the file are kept in TestResults/report/.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class ReportBrowserTests(ITestOutputHelper output)
{
    private static readonly string[] ChartKinds = ["throughput", "bandwidth", "latency", "cpu", "spread", "published", "timeline"];

    [ChromiumFact]
    public async Task PresetReport_OpensOffline_WithEveryChartDrawn()
    {
        // A preset suite of three transports x four payloads x two accesses, three rounds, one failed run, and a name to escape.
        var report = ReportSamples.Preset("reference-1", repetitions: 3, name: "<script>alert('x')</script> & lab \"A\"");
        var directory = Path.Combine(RepoLayout.Root, "TestResults", "report");
        Directory.CreateDirectory(directory);
        var html = Path.Combine(directory, "report.html");
        var screenshot = Path.Combine(directory, "report.png");
        await File.WriteAllTextAsync(html, HtmlReport.Render(report));

        var line = await ChromiumTools.CheckAsync(html, screenshot);
        output.WriteLine($"report {html}, screenshot {screenshot}");
        using var result = JsonDocument.Parse(line);
        var root = result.RootElement;

        Assert.Empty(Strings(root, "pageErrors"));
        Assert.Empty(Strings(root, "consoleErrors"));
        Assert.Empty(Strings(root, "refused"));
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
        Assert.True(new FileInfo(screenshot).Length > 10_000, "the screenshot is (nearly) empty");
    }

    private static List<string> Strings(JsonElement root, string name) =>
        root.GetProperty(name).EnumerateArray().Select(e => e.GetString() ?? string.Empty).ToList();
}
