using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Suites on a real daemon: a preset of real cross-process transports driven by grpcurl alone, and a daemon killed
/// mid-suite and restarted. The suite mechanics that need no process are <see cref="SuiteContractTests"/>.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SuiteTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(240);

    /// <summary>reference-4's three cells, three rounds.</summary>
    private const int ScenariosTotal = 9;
    private readonly DaemonDirectory _state = new("suites");

    private DaemonSettings Setup => _state.Settings;

    public void Dispose() => _state.Dispose();

    [GrpcurlFact]
    public async Task Preset_ThroughGrpcurlAlone_RunsWatchesAndExportsMarkdownAndHtml()
    {
        // Warm agents, as the daemon ships: 9 scenarios hand their agents on instead of starting one each. §4's preset,
        // three round-trip cells of three cross-process transports, three rounds: a watch sees it run for seconds. §1's
        // 24 cells (iceoryx2 among them) took 37-40 s of the measuring lane for the same RPCs; every preset's cells are
        // checked against the validator and the published figures in ReferencePresetTests.
        await using var daemon = await DaemonProcess.StartAsync(Setup with { Configuration = ["--IpcBench:WarmAgentIdleSeconds=15"] });
        using var log = daemon.LogTo(output);

        string id;
        using (var started = JsonDocument.Parse(await GrpcurlAsync(daemon,
            ["-d", """{"spec":{"preset":"reference-4","duration":"0.2s","warmup":"0s","repetitions":3}}"""], "ipcbench.v1.BenchControl/StartSuite")))
        {
            id = started.RootElement.GetProperty("id").GetString()!;
            Assert.Equal(ScenariosTotal, started.RootElement.GetProperty("suite").GetProperty("scenarios_total").GetInt32());
        }

        // A watch while it runs (grpcurl prints one JSON object per streamed message; -max-time ends it after a few),
        // then GetSuite until it has finished, and a last watch that sends the final snapshot and ends.
        var watching = await GrpcurlRunner.RunAsync(["-plaintext", "-max-time", "4", "-d", $$"""{"id":"{{id}}"}""", daemon.Address, "ipcbench.v1.BenchControl/WatchSuite"]);
        output.WriteLine($"$ {watching.CommandLine}\n{watching.Stdout}{watching.Stderr}");
        var snapshots = ReadStream(watching.Stdout);
        Assert.True(snapshots.Count >= 2, watching.Stdout + watching.Stderr);
        Assert.Contains(snapshots, s => s.TryGetProperty("running_scenario_id", out var r) && r.GetString()!.Length > 0);
        Assert.All(snapshots, s => Assert.Equal(ScenariosTotal, s.GetProperty("scenarios_total").GetInt32()));
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            using var got = JsonDocument.Parse(await GrpcurlAsync(daemon, ["-d", $$"""{"id":"{{id}}"}"""], "ipcbench.v1.BenchControl/GetSuite"));
            var state = got.RootElement.GetProperty("state").GetString();
            if (state != "SUITE_STATE_RUNNING" && state != "SUITE_STATE_PENDING")
            {
                Assert.Equal("SUITE_STATE_COMPLETED", state);
                break;
            }

            Assert.True(clock.Elapsed < Timeout, $"suite {id} still {state} after {Timeout}");
            await Task.Delay(1000);
        }

        var last = Assert.Single(ReadStream(await GrpcurlAsync(daemon, ["-d", $$"""{"id":"{{id}}"}"""], "ipcbench.v1.BenchControl/WatchSuite")));
        Assert.Equal("SUITE_STATE_COMPLETED", last.GetProperty("state").GetString());
        Assert.Equal(ScenariosTotal, last.GetProperty("scenarios_done").GetInt32());

        using (var markdown = JsonDocument.Parse(await GrpcurlAsync(daemon, ["-d", $$"""{"id":"{{id}}","format":"REPORT_FORMAT_MARKDOWN"}"""],
            "ipcbench.v1.BenchControl/ExportSuite")))
        {
            Assert.Equal("text/markdown", markdown.RootElement.GetProperty("content_type").GetString());
            var content = markdown.RootElement.GetProperty("content").GetString()!;
            Assert.Contains("published-figures.md §4", content, StringComparison.Ordinal);
            Assert.Contains("shm-ring", content, StringComparison.Ordinal);
        }

        using var html = JsonDocument.Parse(await GrpcurlAsync(daemon, ["-d", $$"""{"id":"{{id}}","format":"REPORT_FORMAT_HTML"}"""],
            "ipcbench.v1.BenchControl/ExportSuite"));
        Assert.Equal("report.html", html.RootElement.GetProperty("file_name").GetString());
        var page = html.RootElement.GetProperty("content").GetString()!;
        Assert.StartsWith("<!DOCTYPE html>", page, StringComparison.OrdinalIgnoreCase);
        if (ChromiumTools.Missing is null)
        {
            var file = Path.Combine(_state.Path, "report.html");
            await File.WriteAllTextAsync(file, page);
            output.WriteLine(await ChromiumTools.CheckAsync(file, Path.Combine(_state.Path, "report.png")));
        }
    }

    [Fact]
    public async Task DaemonKilledMidSuite_AfterRestart_TheSuiteIsFailedDaemonRestarted_WithItsFinishedCells()
    {
        string id;
        await using (var first = await DaemonProcess.StartAsync(Setup))
        {
            using var log = first.LogTo(output);
            // Short cells: the kill only has to land after the first has finished and before the last.
            id = (await first.Control.StartSuiteAsync(new StartSuiteRequest { Spec = SuiteContractTests.Matrix([8, 16], 0.3, repetitions: 3) })).Id;
            await SuiteContractTests.WaitAsync(first, id, s => s.ScenariosDone >= 1);
            await first.KillAsync();
        }

        await using var second = await DaemonProcess.StartAsync(Setup);
        using var secondLog = second.LogTo(output);
        var suite = await second.Control.GetSuiteAsync(new GetSuiteRequest { Id = id });
        Assert.Equal(SuiteState.Failed, suite.State);
        Assert.Equal("daemon restarted", suite.Error);
        Assert.True(suite.ScenariosDone >= 1, suite.ToString());
        var finished = await second.GetScenarioAsync(suite.Cells[0].ScenarioIds[0]);
        Assert.Equal(ScenarioState.Completed, finished.State);
        Assert.True(suite.Cells[0].Stats.Repetitions >= 1, suite.ToString());
        var listed = await second.Control.ListSuitesAsync(new ListSuitesRequest { State = SuiteState.Failed });
        Assert.Contains(listed.Suites, s => s.Id == id);
    }

    private static List<JsonElement> ReadStream(string stdout)
    {
        var reader = new Utf8JsonReader(System.Text.Encoding.UTF8.GetBytes(stdout), new JsonReaderOptions { AllowMultipleValues = true });
        var values = new List<JsonElement>();
        while (reader.Read())
        {
            using var document = JsonDocument.ParseValue(ref reader);
            values.Add(document.RootElement.Clone());
        }

        return values;
    }

    private async Task<string> GrpcurlAsync(DaemonProcess daemon, string[] flags, params string[] command)
    {
        var result = await GrpcurlRunner.RunAsync(["-plaintext", .. flags, daemon.Address, .. command]);
        output.WriteLine($"$ {result.CommandLine}\n{result.Stdout}{result.Stderr}");
        Assert.True(result.ExitCode == 0, $"{result.CommandLine} exited with {result.ExitCode}: {result.Stderr}\n{daemon.Output.Describe()}");
        return result.Stdout;
    }
}
