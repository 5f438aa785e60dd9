using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The daemon as its users drive it: with the real grpcurl, through server reflection. What it checks is the control
/// plane's answers, not the figures, so every scenario is paced with BLOCK waits and the class runs in the light lane.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class GrpcurlTests(LightDaemon shared, ITestOutputHelper output) : IClassFixture<LightDaemon>, IDisposable
{
    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [GrpcurlFact]
    public async Task List_ShowsBenchControl()
    {
        var stdout = await GrpcurlAsync([], "list");

        Assert.Contains("ipcbench.v1.BenchControl", stdout.Split('\n', StringSplitOptions.TrimEntries));
        Assert.Contains("grpc.health.v1.Health", stdout.Split('\n', StringSplitOptions.TrimEntries));
    }

    [GrpcurlFact]
    public async Task Describe_BenchControl_ShowsItsMethods()
    {
        var stdout = await GrpcurlAsync([], "describe", "ipcbench.v1.BenchControl");

        Assert.Contains("ipcbench.v1.BenchControl is a service", stdout);
        Assert.Contains("rpc StartScenario ( .ipcbench.v1.StartScenarioRequest ) returns ( .ipcbench.v1.StartScenarioResponse );", stdout);
        Assert.Contains("rpc WatchScenario ( .ipcbench.v1.WatchScenarioRequest ) returns ( stream .ipcbench.v1.Scenario );", stdout);
        Assert.Contains("rpc ExportScenarios ( .ipcbench.v1.ExportScenariosRequest ) returns ( .ipcbench.v1.ExportScenariosResponse );", stdout);
        Assert.Contains("rpc CompareScenarios ( .ipcbench.v1.CompareScenariosRequest ) returns ( .ipcbench.v1.CompareScenariosResponse );", stdout);
    }

    /// <summary>README's export and compare commands: JSON and CSV documents, then two runs compared.</summary>
    [GrpcurlFact]
    public async Task ExportScenarios_AsJsonAndCsv_AndCompareScenarios_AsTheReadmeShowsThem()
    {
        // Two runs side by side; started one after the other, so the second is the newer.
        var spec = Specs.Stream("uds", 1, 1, Specs.Seconds(1)).Paced();
        var startedFirst = await _daemon.StartScenarioAsync(spec);
        var startedSecond = await _daemon.StartScenarioAsync(spec);
        var first = await _daemon.WaitUntilFinishedAsync(startedFirst.Id, TimeSpan.FromSeconds(60));
        var second = await _daemon.WaitUntilFinishedAsync(startedSecond.Id, TimeSpan.FromSeconds(60));

        string content;
        using (var json = JsonDocument.Parse(await GrpcurlAsync(["-d", $$"""{"ids":["{{first.Id}}","{{second.Id}}"],"format":"EXPORT_FORMAT_JSON"}"""],
            "ipcbench.v1.BenchControl/ExportScenarios")))
        {
            Assert.Equal("application/json", json.RootElement.GetProperty("content_type").GetString());
            Assert.Equal(2, json.RootElement.GetProperty("scenario_count").GetInt32());
            content = json.RootElement.GetProperty("content").GetString()!;
        }

        var export = Google.Protobuf.JsonParser.Default.Parse<ScenarioExport>(content);
        Assert.Equal([first.Id, second.Id], export.Scenarios.Select(r => r.Scenario.Id));
        Assert.Equal(first.Stats, export.Scenarios[0].Scenario.Stats);
        Assert.Equal(first.Environment, export.Scenarios[0].Scenario.Environment);
        Assert.All(export.Scenarios, r => Assert.True(r.Series.Count >= 1, r.ToString()));
        // Proto field names and zeros written out, as grpcurl prints messages.
        Assert.Contains("\"messages_lost\": \"0\"", content, StringComparison.Ordinal);

        using (var csv = JsonDocument.Parse(await GrpcurlAsync(["-d", $$"""{"ids":["{{first.Id}}"],"format":"EXPORT_FORMAT_CSV"}"""],
            "ipcbench.v1.BenchControl/ExportScenarios")))
        {
            Assert.Equal("text/csv", csv.RootElement.GetProperty("content_type").GetString());
            var summary = CsvTable.Parse(csv.RootElement.GetProperty("content").GetString()!);
            var row = Assert.Single(summary.Rows);
            Assert.Equal(first.Id, summary.Get(row, "id"));
            Assert.Equal("uds", summary.Get(row, "transport"));
            Assert.Equal(first.Stats.MessagesReceived.ToString(System.Globalization.CultureInfo.InvariantCulture), summary.Get(row, "messages_received"));
            var series = CsvTable.Parse(csv.RootElement.GetProperty("series_content").GetString()!);
            Assert.Equal(export.Scenarios[0].Series.Count, series.Rows.Count);
            Assert.All(series.Rows, r => Assert.Equal(first.Id, series.Get(r, "scenario_id")));
        }

        // Filters instead of ids: this daemon's uds scenarios, newest first, one to a page.
        using (var page = JsonDocument.Parse(await GrpcurlAsync(["-d", """{"transport":"uds","page_size":1,"format":"EXPORT_FORMAT_CSV"}"""],
            "ipcbench.v1.BenchControl/ExportScenarios")))
        {
            Assert.Equal(second.Id, CsvTable.Parse(page.RootElement.GetProperty("content").GetString()!).Rows.Single()[0]);
            Assert.False(string.IsNullOrEmpty(page.RootElement.GetProperty("next_page_token").GetString()));
        }

        using var compare = JsonDocument.Parse(await GrpcurlAsync(
            ["-d", $$"""{"baseline_id":"{{first.Id}}","candidate_id":"{{second.Id}}","threshold_percent":10}"""],
            "ipcbench.v1.BenchControl/CompareScenarios"));
        var root = compare.RootElement;
        string[] verdicts = first.Stats.Validity.Count + second.Stats.Validity.Count == 0
            ? ["COMPARISON_VERDICT_SAME", "COMPARISON_VERDICT_IMPROVED", "COMPARISON_VERDICT_REGRESSED"]
            : ["COMPARISON_VERDICT_INCONCLUSIVE"];
        Assert.Contains(root.GetProperty("verdict").GetString(), verdicts);
        Assert.Equal(10, root.GetProperty("threshold_percent").GetDouble());
        var metrics = root.GetProperty("metrics").EnumerateArray().Select(m => m.GetProperty("metric").GetString()).ToList();
        Assert.Contains("messages_per_second", metrics);
        Assert.Contains("latency_p99", metrics);
        Assert.Contains("cpu_per_message_agent", metrics);
        Assert.Contains("messages_lost", metrics);
    }

    /// <summary>README's .hlog export: a round-trip run's latency per second as an HdrHistogram log.</summary>
    [GrpcurlFact]
    public async Task ExportScenarios_AsHdrLog_HoldsEveryLatencyTheScenarioReported()
    {
        var spec = Specs.Stream("uds", 1, 1, Specs.Seconds(2)).Paced().With(s => s.Mode = Mode.RoundTrip);
        var scenario = await _daemon.RunScenarioAsync(spec);

        using var response = JsonDocument.Parse(await GrpcurlAsync(["-d", $$"""{"ids":["{{scenario.Id}}"],"format":"EXPORT_FORMAT_HDR_LOG"}"""],
            "ipcbench.v1.BenchControl/ExportScenarios"));
        Assert.Equal("EXPORT_FORMAT_HDR_LOG", response.RootElement.GetProperty("format").GetString());
        Assert.Equal("text/plain", response.RootElement.GetProperty("content_type").GetString());
        var content = response.RootElement.GetProperty("content").GetString()!;
        Assert.StartsWith("#[Histogram log format version", content, StringComparison.Ordinal);
        Assert.Equal(LatencyKind.RoundTrip, scenario.Stats.Latency.Kind);
        using var log = new MemoryStream(System.Text.Encoding.UTF8.GetBytes(content));
        HdrLogAssertions.HoldsEveryReportedLatency(log, [scenario]);
    }

    [GrpcurlFact]
    public async Task StartScenario_FromJson_ReturnsAnId_AndTheScenarioRuns()
    {
        var stdout = await GrpcurlAsync(["-d", """{"spec":{"transport":"uds","publishers":1,"subscribers":1,"payload_bytes":8,"duration":"1s","rate_per_publisher":2000,"wait_strategy":"WAIT_STRATEGY_BLOCK"}}"""],
            "ipcbench.v1.BenchControl/StartScenario");

        using var json = JsonDocument.Parse(stdout);
        var id = json.RootElement.GetProperty("id").GetString();
        Assert.False(string.IsNullOrEmpty(id), stdout);
        Assert.Equal("uds", json.RootElement.GetProperty("scenario").GetProperty("spec").GetProperty("transport").GetString());

        var result = await _daemon.WaitUntilFinishedAsync(id!, TimeSpan.FromSeconds(30));
        new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
    }

    [GrpcurlFact]
    public async Task HealthCheck_IsServing()
    {
        var stdout = await GrpcurlAsync([], "grpc.health.v1.Health/Check");

        using var json = JsonDocument.Parse(stdout);
        Assert.Equal("SERVING", json.RootElement.GetProperty("status").GetString());
    }

    /// <summary>
    /// README's whole user flow, step by step with grpcurl: list, describe, health, transports, start, watch until done,
    /// get, list scenarios, then a soak run (no duration) stopped by StopScenario, and a second stop that does no harm.
    /// </summary>
    [GrpcurlFact]
    public async Task UserFlow_StartWatchGetListStop_AsTheReadmeShowsIt()
    {
        Assert.Contains("ipcbench.v1.BenchControl", (await GrpcurlAsync([], "list")).Split('\n', StringSplitOptions.TrimEntries));
        Assert.Contains("ipcbench.v1.ScenarioSpec is a message", await GrpcurlAsync([], "describe", "ipcbench.v1.ScenarioSpec"), StringComparison.Ordinal);
        using (var health = JsonDocument.Parse(await GrpcurlAsync([], "grpc.health.v1.Health/Check")))
        {
            Assert.Equal("SERVING", health.RootElement.GetProperty("status").GetString());
        }

        using (var transports = JsonDocument.Parse(await GrpcurlAsync([], "ipcbench.v1.BenchControl/ListTransports")))
        {
            Assert.Contains("uds", transports.RootElement.GetProperty("transports").EnumerateArray().Select(t => t.GetProperty("id").GetString()));
        }

        // A timed run, watched until it ends. Three snapshots need it to outlast a watch tick (1 s) after the watch
        // starts: its warmup and duration take 2.5 s whatever the rate.
        string id;
        using (var started = JsonDocument.Parse(await GrpcurlAsync(
            ["-d", """{"spec":{"transport":"uds","publishers":2,"subscribers":2,"payload_bytes":1024,"duration":"2s","warmup":"500ms","rate_per_publisher":2000,"wait_strategy":"WAIT_STRATEGY_BLOCK"}}"""],
            "ipcbench.v1.BenchControl/StartScenario")))
        {
            id = started.RootElement.GetProperty("id").GetString()!;
        }

        var snapshots = ParseStream(await GrpcurlAsync(["-d", $"{{\"id\":\"{id}\"}}"], "ipcbench.v1.BenchControl/WatchScenario"));
        Assert.True(snapshots.Count >= 3, $"{snapshots.Count} snapshots");
        Assert.All(snapshots, s => Assert.Equal(id, s.GetProperty("id").GetString()));
        Assert.Equal("SCENARIO_STATE_COMPLETED", snapshots[^1].GetProperty("state").GetString());
        Assert.Contains(snapshots.SkipLast(1), s => s.GetProperty("state").GetString() == "SCENARIO_STATE_RUNNING");

        using (var result = JsonDocument.Parse(await GrpcurlAsync(["-d", $"{{\"id\":\"{id}\"}}"], "ipcbench.v1.BenchControl/GetScenario")))
        {
            var scenario = result.RootElement;
            Assert.Equal("SCENARIO_STATE_COMPLETED", scenario.GetProperty("state").GetString());
            var stats = scenario.GetProperty("stats");
            Assert.True(ulong.Parse(stats.GetProperty("messages_received").GetString()!, System.Globalization.CultureInfo.InvariantCulture) > 0, stats.ToString());
            Assert.False(stats.TryGetProperty("messages_lost", out var lost) && lost.GetString() != "0", stats.ToString());
            Assert.Equal(3, stats.GetProperty("processes").GetArrayLength());
        }

        using (var list = JsonDocument.Parse(await GrpcurlAsync([], "ipcbench.v1.BenchControl/ListScenarios")))
        {
            Assert.Contains(id, list.RootElement.GetProperty("scenarios").EnumerateArray().Select(s => s.GetProperty("id").GetString()));
        }

        // A soak run: no duration, runs until stopped; StopScenario answers with the result.
        string soak;
        using (var started = JsonDocument.Parse(await GrpcurlAsync(
            ["-d", """{"spec":{"transport":"tcp","publishers":1,"subscribers":2,"payload_bytes":512,"rate_per_publisher":2000,"wait_strategy":"WAIT_STRATEGY_BLOCK"}}"""],
            "ipcbench.v1.BenchControl/StartScenario")))
        {
            soak = started.RootElement.GetProperty("id").GetString()!;
        }

        // Stopped once it has delivered something, so the result has a count to show.
        await _daemon.WaitForAsync(soak, s => s.State == IpcBench.V1.ScenarioState.Running && s.Stats is { MessagesReceived: > 0 }, TimeSpan.FromSeconds(30), "to run and receive");
        using (var stopped = JsonDocument.Parse(await GrpcurlAsync(["-d", $"{{\"id\":\"{soak}\"}}"], "ipcbench.v1.BenchControl/StopScenario")))
        {
            Assert.Equal("SCENARIO_STATE_STOPPED", stopped.RootElement.GetProperty("state").GetString());
            Assert.True(stopped.RootElement.GetProperty("stats").TryGetProperty("messages_received", out _), stopped.RootElement.ToString());
        }

        using (var again = JsonDocument.Parse(await GrpcurlAsync(["-d", $"{{\"id\":\"{soak}\"}}"], "ipcbench.v1.BenchControl/StopScenario")))
        {
            Assert.Equal("SCENARIO_STATE_STOPPED", again.RootElement.GetProperty("state").GetString());
        }
    }

    /// <summary>grpcurl prints each streamed message as its own JSON object, one after the other.</summary>
    private static List<JsonElement> ParseStream(string text)
    {
        var reader = new Utf8JsonReader(System.Text.Encoding.UTF8.GetBytes(text), new JsonReaderOptions { AllowMultipleValues = true });
        var values = new List<JsonElement>();
        while (reader.Read())
        {
            using var document = JsonDocument.ParseValue(ref reader);
            values.Add(document.RootElement.Clone());
        }

        return values;
    }

    /// <summary>grpcurl -plaintext FLAGS ADDRESS COMMAND: the address goes between the flags and the method, list or describe.</summary>
    private async Task<string> GrpcurlAsync(string[] flags, params string[] command)
    {
        var result = await GrpcurlRunner.RunAsync(["-plaintext", .. flags, _daemon.Address, .. command]);
        output.WriteLine($"$ {result.CommandLine}\n{result.Stdout}{result.Stderr}");
        Assert.True(result.ExitCode == 0, $"{result.CommandLine} exited with {result.ExitCode}: {result.Stderr}\n{_daemon.Output.Describe()}");
        return result.Stdout;
    }
}
