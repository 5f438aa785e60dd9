using System.Text.Json;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A soak's page opened in Chromium: two scenarios over two hours of points draw one throughput and one p99 chart with a
/// line each, and a memory chart per scenario with every process's RSS, GC-committed memory and heap; the hour table
/// has a row per scenario and hour. The page is rendered from synthetic points, so the test needs no soak.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class SoakPageBrowserTests(ITestOutputHelper output)
{
    [ChromiumFact]
    public async Task ASoakPage_DrawsThroughputLatencyAndMemoryAgainstTime_ForEveryScenario()
    {
        var scenarios = new[] { Scenario("uds", 3), Scenario("zeromq", 1) };
        string page = SoakPage.Render(scenarios, environment: null);
        var directory = Path.Combine(RepoLayout.Root, "TestResults", "report");
        Directory.CreateDirectory(directory);
        var html = Path.Combine(directory, "soak-page.html");
        await File.WriteAllTextAsync(html, page);

        using var result = JsonDocument.Parse(await ChromiumTools.CheckAsync(html, Path.ChangeExtension(html, ".png")));
        var root = result.RootElement;
        foreach (var errors in new[] { "pageErrors", "consoleErrors", "refused" })
        {
            Assert.Empty(root.GetProperty(errors).EnumerateArray());
        }

        var charts = root.GetProperty("charts").EnumerateArray().ToList();
        output.WriteLine(string.Join("\n", charts.Select(c => c.GetRawText())));
        Assert.Equal("4", root.GetProperty("chartsAttribute").GetString());
        var throughput = Assert.Single(charts, c => c.GetProperty("kind").GetString() == "throughput");
        Assert.Equal(["uds 1 KB", "zeromq 1 KB"], throughput.GetProperty("datasets").EnumerateArray().Select(d => d.GetProperty("label").GetString()));
        Assert.All(throughput.GetProperty("datasets").EnumerateArray(), d => Assert.Equal(720, d.GetProperty("drawn").GetInt32()));
        var memory = charts.Where(c => c.GetProperty("kind").GetString() == "memory").ToList();
        var udsLines = memory.Single(c => c.GetProperty("title").GetString() == "uds 1 KB").GetProperty("datasets").EnumerateArray()
            .Select(d => d.GetProperty("label").GetString()).ToList();
        Assert.Equal(12, udsLines.Count); // daemon and three agents, three measures each
        Assert.Contains("agent 2 committed", udsLines);
        var hours = root.GetProperty("sections").EnumerateArray().Single(s => s.GetProperty("id").GetString() == "hours").GetProperty("text").GetString()!;
        Assert.Equal(4, hours.Split('\n').Count(l => l.StartsWith("uds 1 KB", StringComparison.Ordinal) || l.StartsWith("zeromq 1 KB", StringComparison.Ordinal)));
    }

    /// <summary>Two hours of 10-second points: a steady rate, a p99 with noise, and each process's memory flat.</summary>
    private static SoakPageScenario Scenario(string transport, int agents)
    {
        var hours = Enumerable.Range(0, 720).Select(i => (5 + 10 * i) / 3600.0).ToList();
        var points = hours.Select((h, i) => new SoakPagePoint(h, 4000 + i % 3, 60_000, 2_000_000 + i % 11 * 10_000, 5_000_000)).ToList();
        var memory = new List<SoakPageMemory>();
        for (int index = -1; index < agents; index++)
        {
            string process = index < 0 ? "daemon" : $"agent {index}";
            memory.Add(new(process, index < 0, "rss", [.. hours.Select((h, i) => (h, 90e6 + i % 7 * 1e5))]));
            memory.Add(new(process, index < 0, "committed", [.. hours.Select(h => (h, 40e6))]));
            memory.Add(new(process, index < 0, "heap", [.. hours.Select((h, i) => (h, 20e6 + i % 5 * 1e5))]));
        }

        return new SoakPageScenario(transport + "-id", transport + " 1 KB", "SCENARIO_STATE_COMPLETED", string.Empty, DateTime.UtcNow, 0, 0, 0, null, points, memory);
    }
}
