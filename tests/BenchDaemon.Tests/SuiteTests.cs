using System.Text.Json;
using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Suites on a real daemon: a preset driven by grpcurl alone, interleaved repetitions, StopSuite, a restart, validation,
/// ListScenarios' suite filter and CompareSuites. In-process "channels" keeps most of them to seconds.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SuiteTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(240);
    private readonly DaemonDirectory _state = new("suites");

    private DaemonSettings Setup => _state.Settings;

    public void Dispose() => _state.Dispose();

    [GrpcurlFact]
    public async Task Preset_ThroughGrpcurlAlone_RunsWatchesAndExportsMarkdownAndHtml()
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        using var log = daemon.LogTo(output);

        string id;
        using (var started = JsonDocument.Parse(await GrpcurlAsync(daemon, ["-d", """{"spec":{"preset":"reference-1","duration":"0.2s","warmup":"0s"}}"""],
            "ipcbench.v1.BenchControl/StartSuite")))
        {
            id = started.RootElement.GetProperty("id").GetString()!;
            Assert.Equal(24, started.RootElement.GetProperty("suite").GetProperty("scenarios_total").GetInt32());
        }

        // A watch while it runs (grpcurl prints one JSON object per streamed message; -max-time ends it after a few),
        // then GetSuite until it has finished, and a last watch that sends the final snapshot and ends.
        var watching = await GrpcurlRunner.RunAsync(["-plaintext", "-max-time", "4", "-d", $$"""{"id":"{{id}}"}""", daemon.Address, "ipcbench.v1.BenchControl/WatchSuite"]);
        output.WriteLine($"$ {watching.CommandLine}\n{watching.Stdout}{watching.Stderr}");
        var snapshots = ReadStream(watching.Stdout);
        Assert.True(snapshots.Count >= 2, watching.Stdout + watching.Stderr);
        Assert.Contains(snapshots, s => s.TryGetProperty("running_scenario_id", out var r) && r.GetString()!.Length > 0);
        Assert.All(snapshots, s => Assert.Equal(24, s.GetProperty("scenarios_total").GetInt32()));
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
        Assert.Equal(24, last.GetProperty("scenarios_done").GetInt32());

        using (var markdown = JsonDocument.Parse(await GrpcurlAsync(daemon, ["-d", $$"""{"id":"{{id}}","format":"REPORT_FORMAT_MARKDOWN"}"""],
            "ipcbench.v1.BenchControl/ExportSuite")))
        {
            Assert.Equal("text/markdown", markdown.RootElement.GetProperty("content_type").GetString());
            var content = markdown.RootElement.GetProperty("content").GetString()!;
            Assert.Contains("published-figures.md §1", content, StringComparison.Ordinal);
            Assert.Contains("iceoryx2", content, StringComparison.Ordinal);
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
    public async Task Repetitions_RunInInterleavedRounds_AndListScenariosFiltersBySuite()
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        using var log = daemon.LogTo(output);

        var suite = await RunAsync(daemon, Matrix([8, 64], 0.2, repetitions: 2));

        Assert.Equal(SuiteState.Completed, suite.State);
        Assert.Equal(4, suite.ScenariosDone);
        Assert.All(suite.Cells, c => Assert.Equal(2, c.ScenarioIds.Count));
        Assert.All(suite.Cells, c => Assert.Equal(2, c.Stats.Repetitions));
        var listed = await daemon.ListScenariosAsync(new ListScenariosRequest { SuiteId = suite.Id });
        Assert.Equal(4, listed.Scenarios.Count);
        Assert.All(listed.Scenarios, s => Assert.Equal(suite.Id, s.SuiteId));
        // Round 1 runs every cell once, then round 2: cell 0, cell 1, cell 0, cell 1 — never one cell twice in a row.
        var cellOf = suite.Cells.SelectMany((c, i) => c.ScenarioIds.Select(id => (id, i))).ToDictionary(p => p.id, p => p.i);
        var order = listed.Scenarios.OrderBy(s => s.CreatedAt.ToDateTime()).Select(s => cellOf[s.Id]).ToList();
        Assert.Equal([0, 1, 0, 1], order);
        // /metrics: the suite's scenarios counted, and no suite left active (the series carry no ids).
        using (var http = new HttpClient())
        {
            var metrics = await http.GetStringAsync(daemon.MetricsUrl);
            Assert.Matches(new System.Text.RegularExpressions.Regex(@"^ipcbench_suite_scenarios_completed_total 4$", System.Text.RegularExpressions.RegexOptions.Multiline), metrics);
            Assert.Matches(new System.Text.RegularExpressions.Regex(@"^ipcbench_suite_active 0$", System.Text.RegularExpressions.RegexOptions.Multiline), metrics);
        }

        var unrelated = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Seconds(0.2)));
        Assert.DoesNotContain((await daemon.ListScenariosAsync(new ListScenariosRequest { SuiteId = suite.Id })).Scenarios, s => s.Id == unrelated.Id);
    }

    [Fact]
    public async Task StopSuite_StopsTheRunningCell_AndKeepsTheFinishedOnes()
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        using var log = daemon.LogTo(output);

        var started = await daemon.Control.StartSuiteAsync(new StartSuiteRequest { Spec = Matrix([8, 16], 1, repetitions: 3) });
        await WaitAsync(daemon, started.Id, s => s.ScenariosDone >= 1 && s.State == SuiteState.Running);
        var stopped = await daemon.Control.StopSuiteAsync(new StopSuiteRequest { Id = started.Id });

        Assert.Equal(SuiteState.Stopped, stopped.State);
        Assert.InRange(stopped.ScenariosDone, 2, 5);
        var ids = stopped.Cells.SelectMany(c => c.ScenarioIds).ToList();
        Assert.Equal(stopped.ScenariosDone, ids.Count);
        var scenarios = await Task.WhenAll(ids.Select(daemon.GetScenarioAsync));
        Assert.Contains(scenarios, s => s.State == ScenarioState.Stopped);
        Assert.Contains(scenarios, s => s.State == ScenarioState.Completed);
        // The slot is free again: a plain scenario starts at once.
        await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Seconds(0.2)));
    }

    [Fact]
    public async Task DaemonKilledMidSuite_AfterRestart_TheSuiteIsFailedDaemonRestarted_WithItsFinishedCells()
    {
        string id;
        await using (var first = await DaemonProcess.StartAsync(Setup))
        {
            using var log = first.LogTo(output);
            id = (await first.Control.StartSuiteAsync(new StartSuiteRequest { Spec = Matrix([8, 16], 1, repetitions: 3) })).Id;
            await WaitAsync(first, id, s => s.ScenariosDone >= 1);
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

    [Theory]
    [InlineData("""{"payload_bytes":[8]}""", "spec.duration")]
    [InlineData("""{"preset":"reference-9"}""", "spec.preset")]
    [InlineData("""{"preset":"reference-1","transports":["uds"]}""", "spec.transports")]
    [InlineData("""{"transports":["channels"],"payload_bytes":[8],"duration":"1s","repetitions":101}""", "spec.repetitions: must be 1..100")]
    [InlineData("""{"transports":["channels"],"payload_bytes":[0],"duration":"1s"}""", "spec.payload_bytes")]
    [InlineData("""{"transports":["nope"],"payload_bytes":[8],"duration":"1s"}""", "spec.transports")]
    public async Task StartSuite_RefusesABadSpec_NamingTheField(string spec, string expected)
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        var request = new StartSuiteRequest { Spec = Google.Protobuf.JsonParser.Default.Parse<SuiteSpec>(spec) };

        var e = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.StartSuiteAsync(request));

        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.Contains(expected, e.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task CompareSuites_GivesEachCellAndTheWholeAVerdict()
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        using var log = daemon.LogTo(output);
        var baseline = await RunAsync(daemon, Matrix([8, 64], 0.3, repetitions: 1));
        var candidate = await RunAsync(daemon, Matrix([8, 64], 0.3, repetitions: 1));

        var compared = await daemon.Control.CompareSuitesAsync(new CompareSuitesRequest { BaselineId = baseline.Id, CandidateId = candidate.Id });

        Assert.Equal(2, compared.Cells.Count);
        Assert.All(compared.Cells, c => Assert.NotEqual(ComparisonVerdict.Unspecified, c.Verdict));
        Assert.All(compared.Cells, c => Assert.Contains(c.Metrics, m => m.Metric == "messages_per_second"));
        var expected = compared.Cells.Any(c => c.Verdict == ComparisonVerdict.Regressed) ? ComparisonVerdict.Regressed
            : compared.Cells.Any(c => c.Verdict == ComparisonVerdict.Improved) ? ComparisonVerdict.Improved : ComparisonVerdict.Same;
        Assert.Equal(expected, compared.Verdict);
        var presets = await daemon.Control.ListSuitePresetsAsync(new ListSuitePresetsRequest());
        Assert.Equal(["reference-1", "reference-2", "reference-3", "reference-4", "reference-5"], presets.Presets.Select(p => p.Id));
    }

    [Fact]
    public async Task ExportSuite_WithBaseline_CarriesCompareSuitesVerdicts_AndRefusesUnknownBaselineOrBadThreshold()
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        using var log = daemon.LogTo(output);
        var baseline = await RunAsync(daemon, Matrix([8, 64], 0.3, repetitions: 1));
        var candidate = await RunAsync(daemon, Matrix([8, 64], 0.3, repetitions: 1));
        var compared = await daemon.Control.CompareSuitesAsync(new CompareSuitesRequest { BaselineId = baseline.Id, CandidateId = candidate.Id, ThresholdPercent = 20 });
        ExportSuiteRequest Export(ReportFormat format) => new() { Id = candidate.Id, Format = format, BaselineId = baseline.Id, ThresholdPercent = 20 };

        var json = await daemon.Control.ExportSuiteAsync(Export(ReportFormat.Json));
        using (var document = JsonDocument.Parse(json.Content))
        {
            var comparison = document.RootElement.GetProperty("comparison");
            Assert.Equal(baseline.Id, comparison.GetProperty("baseline_id").GetString());
            Assert.Equal(20, comparison.GetProperty("threshold_percent").GetDouble());
            Assert.Equal(compared.Verdict.ToString().ToLowerInvariant(), comparison.GetProperty("verdict").GetString());
            Assert.Equal(compared.Cells.Select(c => c.Verdict.ToString().ToLowerInvariant()),
                comparison.GetProperty("cells").EnumerateArray().Select(c => c.GetProperty("verdict").GetString()));
        }

        var markdown = await daemon.Control.ExportSuiteAsync(Export(ReportFormat.Markdown));
        Assert.Contains($"## Compared with baseline `{baseline.Id}`", markdown.Content, StringComparison.Ordinal);
        Assert.Contains($"**{compared.Verdict.ToString().ToUpperInvariant()}** — ", markdown.Content, StringComparison.Ordinal);
        // CSV: the report and the comparison are two documents, each one table a CSV reader takes.
        var csv = await daemon.Control.ExportSuiteAsync(Export(ReportFormat.Csv));
        Assert.Equal((await daemon.Control.ExportSuiteAsync(new ExportSuiteRequest { Id = candidate.Id, Format = ReportFormat.Csv })).Content, csv.Content);
        Assert.NotEmpty(CsvTable.Parse(csv.Content).Rows);
        var comparisonCsv = CsvTable.Parse(csv.ComparisonContent);
        Assert.Equal(1 + compared.Cells.Sum(c => Math.Max(1, c.Metrics.Count)), comparisonCsv.Rows.Count);
        Assert.All(comparisonCsv.Rows, r => Assert.Equal(baseline.Id, comparisonCsv.Get(r, "baseline_id")));
        Assert.Equal(compared.Verdict.ToString().ToLowerInvariant(), comparisonCsv.Get(comparisonCsv.Rows[0], "verdict"));
        Assert.Empty(json.ComparisonContent);
        Assert.Contains("id=\"comparison-chart\"", (await daemon.Control.ExportSuiteAsync(Export(ReportFormat.Html))).Content, StringComparison.Ordinal);

        var unknown = await Assert.ThrowsAsync<RpcException>(async () =>
            await daemon.Control.ExportSuiteAsync(new ExportSuiteRequest { Id = candidate.Id, BaselineId = "s000000000000" }));
        Assert.Equal(StatusCode.NotFound, unknown.StatusCode);
        Assert.Contains("baseline_id", unknown.Status.Detail, StringComparison.Ordinal);
        var tooHigh = Export(ReportFormat.Markdown);
        tooHigh.ThresholdPercent = 2000;
        foreach (var request in (ExportSuiteRequest[])[tooHigh, new ExportSuiteRequest { Id = candidate.Id, ThresholdPercent = 10 }])
        {
            var refused = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.ExportSuiteAsync(request));
            Assert.Equal(StatusCode.InvalidArgument, refused.StatusCode);
            Assert.Contains("threshold_percent", refused.Status.Detail, StringComparison.Ordinal);
        }
    }

    private static SuiteSpec Matrix(int[] payloads, double seconds, int repetitions)
    {
        var spec = new SuiteSpec { Duration = Duration.FromTimeSpan(Specs.Seconds(seconds)), Repetitions = repetitions };
        spec.Transports.Add("channels");
        spec.PayloadBytes.AddRange(payloads);
        return spec;
    }

    private static async Task<Suite> RunAsync(DaemonProcess daemon, SuiteSpec spec)
    {
        var started = await daemon.Control.StartSuiteAsync(new StartSuiteRequest { Spec = spec });
        return await WaitAsync(daemon, started.Id, s => s.State is SuiteState.Completed or SuiteState.Stopped or SuiteState.Failed);
    }

    private static async Task<Suite> WaitAsync(DaemonProcess daemon, string id, Func<Suite, bool> condition)
    {
        Suite? suite = null;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (clock.Elapsed < Timeout)
        {
            suite = await daemon.Control.GetSuiteAsync(new GetSuiteRequest { Id = id });
            if (condition(suite))
            {
                return suite;
            }

            await Task.Delay(100);
        }

        throw new Xunit.Sdk.XunitException($"suite {id} did not get there in {Timeout}: {suite}");
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
