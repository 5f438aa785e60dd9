using System.Diagnostics;
using System.Globalization;
using Google.Protobuf;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.Iceoryx2;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Results that survive: real daemons on one database, stopped with SIGTERM or killed with SIGKILL mid-run, and
/// started again. Each test has its own runtime directory and database, removed at the end. Every scenario is paced
/// (<see cref="Specs.Paced"/>): what survives a restart is the point, not how fast it ran.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class PersistenceTests(ITestOutputHelper output) : IDisposable
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(20) };
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "persist-" + Guid.NewGuid().ToString("N")[..10]);
    private readonly List<ProcessEntry> _agents = [];

    private DaemonSettings Setup => new()
    {
        RuntimeBase = Path.Combine(_directory, "runtime"),
        DatabasePath = Path.Combine(_directory, "state", "scenarios.db"),
    };

    public void Dispose()
    {
        // Agents a killed daemon left behind must be gone by now (the tests say so); never leave one running anyway.
        _agents.ForEach(a => ProcessTree.SignalIfAlive(a, ProcessTree.SigKill));
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    [Fact]
    public async Task SigTerm_ThenRestart_GetScenarioFindsIdenticalResults_AndListScenariosPagesAndFiltersThem()
    {
        Scenario uds, channels, stopped;
        await using (var first = await DaemonProcess.StartAsync(Setup))
        {
            using var log = first.LogTo(output);
            // Started one after the other (their creation order is what the listing below pages by), run side by side.
            var startedUds = await first.StartScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Seconds(1)).Paced());
            var startedChannels = await first.StartScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Milliseconds(500)).Paced());
            var soak = await first.StartScenarioAsync(Specs.Stream("uds", 1, 1, duration: null).Paced(5000));
            uds = await first.WaitUntilFinishedAsync(startedUds.Id, TimeSpan.FromSeconds(30));
            channels = await first.WaitUntilFinishedAsync(startedChannels.Id, TimeSpan.FromSeconds(30));
            await first.WaitForStateAsync(soak.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
            stopped = await first.StopScenarioAsync(soak.Id);
            Assert.Equal(ScenarioState.Stopped, stopped.State);
            Assert.Equal(ScenarioState.Completed, uds.State);
            Assert.Equal(ScenarioState.Completed, channels.State);

            Assert.True(await first.TerminateAsync(TimeSpan.FromSeconds(10)), $"the daemon did not stop on SIGTERM\n{first.Output.Describe()}");
            Assert.Equal(0, first.ExitCode);
        }

        await using var second = await DaemonProcess.StartAsync(Setup);
        using var secondLog = second.LogTo(output);
        foreach (var before in new[] { uds, channels, stopped })
        {
            var after = await second.GetScenarioAsync(before.Id);
            Assert.True(before.Equals(after), $"before: {JsonFormatter.Default.Format(before)}\nafter: {JsonFormatter.Default.Format(after)}");
        }

        // Newest first, two to a page: stopped, channels | uds.
        var page1 = await second.ListScenariosAsync(new ListScenariosRequest { PageSize = 2 });
        Assert.Equal([stopped.Id, channels.Id], page1.Scenarios.Select(s => s.Id));
        Assert.NotEmpty(page1.NextPageToken);
        var page2 = await second.ListScenariosAsync(new ListScenariosRequest { PageSize = 2, PageToken = page1.NextPageToken });
        Assert.Equal([uds.Id], page2.Scenarios.Select(s => s.Id));
        Assert.Empty(page2.NextPageToken);

        Assert.Equal([stopped.Id, uds.Id], await IdsAsync(second, new ListScenariosRequest { Transport = "uds" }));
        Assert.Equal([stopped.Id], await IdsAsync(second, new ListScenariosRequest { State = ScenarioState.Stopped }));
        Assert.Equal([uds.Id], await IdsAsync(second, new ListScenariosRequest { Transport = "uds", State = ScenarioState.Completed }));
        Assert.Equal([stopped.Id, channels.Id], await IdsAsync(second, new ListScenariosRequest { CreatedAfter = channels.CreatedAt }));
        Assert.Equal([uds.Id], await IdsAsync(second, new ListScenariosRequest { CreatedBefore = channels.CreatedAt }));

        // A scenario the new daemon runs is listed first, beside the stored ones.
        var fresh = await second.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Milliseconds(300)).Paced());
        Assert.Equal([fresh.Id, stopped.Id, channels.Id, uds.Id], await IdsAsync(second, new ListScenariosRequest()));

        // The series survived too, one point per tick.
        var export = await second.ExportScenariosAsync(new ExportScenariosRequest { Ids = { uds.Id } });
        var record = Assert.Single(JsonParser.Default.Parse<ScenarioExport>(export.Content).Scenarios);
        Assert.True(record.Series.Count >= 1, export.Content);
        Assert.Equal(uds, record.Scenario);
        // uds subscribers are agents: both roles' CPU is in the series. The daemon's is never 0 over a tick, paced as its
        // publisher is: its whole process (gRPC, the tick, a send every 0.5 ms) by getrusage, to the microsecond.
        Assert.All(record.Series, p => Assert.True(p.DaemonCpuPercent > 0 && p.AgentsCpuPercent >= 0, p.ToString()));

        // And the per-second latency histograms: the .hlog export of the stored scenarios holds what they reported.
        var hlog = await second.ExportScenariosAsync(new ExportScenariosRequest { Ids = { uds.Id, channels.Id }, Format = ExportFormat.HdrLog });
        Assert.Equal("text/plain", hlog.ContentType);
        Assert.Equal(2, hlog.ScenarioCount);
        using (var stream = new MemoryStream(System.Text.Encoding.UTF8.GetBytes(hlog.Content)))
        {
            HdrLogAssertions.HoldsEveryReportedLatency(stream, [uds, channels]);
        }

        // Watching or stopping a stored scenario answers with it, as for a finished live one.
        var watched = new List<Scenario>();
        await foreach (var snapshot in second.WatchScenarioAsync(channels.Id))
        {
            watched.Add(snapshot);
        }

        Assert.Equal(channels, Assert.Single(watched));
        Assert.Equal(stopped, await second.StopScenarioAsync(stopped.Id));

        var unknownExport = await Assert.ThrowsAsync<RpcException>(() => second.ExportScenariosAsync(new ExportScenariosRequest { Ids = { uds.Id, "000000000000" } }));
        Assert.Equal(StatusCode.NotFound, unknownExport.StatusCode);
        Assert.Equal("ids[1]: no scenario '000000000000'", unknownExport.Status.Detail);

        var invalid = await Assert.ThrowsAsync<RpcException>(() => second.ListScenariosAsync(new ListScenariosRequest { PageSize = 5000 }));
        Assert.Equal(StatusCode.InvalidArgument, invalid.StatusCode);
        Assert.Equal("page_size: must be 1..1000, or 0 for 100; got 5000", invalid.Status.Detail);
        var wrongToken = await Assert.ThrowsAsync<RpcException>(() => second.ListScenariosAsync(new ListScenariosRequest { Transport = "tcp", PageToken = page1.NextPageToken }));
        Assert.Equal(StatusCode.InvalidArgument, wrongToken.StatusCode);
        Assert.StartsWith("page_token: ", wrongToken.Status.Detail, StringComparison.Ordinal);
        var missing = await Assert.ThrowsAsync<RpcException>(() => second.GetScenarioAsync("000000000000"));
        Assert.Equal(StatusCode.NotFound, missing.StatusCode);
    }

    /// <summary>
    /// Kills the daemon alone (its agents must notice and exit by themselves) while a scenario runs on each of these
    /// transports at once, then starts a new daemon on the same runtime directory and database. Each transport's
    /// leftovers (what it left of the killed daemon's scenario, by daemon pid and scenario id) must have been removed
    /// by the new daemon: shm-ring's rings and iceoryx2's services; uds and grpc-uds sockets live in the runtime
    /// directory checked for all; zeromq keeps no files (its ephemeral loopback ports die with the process) but its
    /// agents must still go.
    /// </summary>
    [Fact]
    public async Task SigKill_MidRun_OnEveryTransportAtOnce_FailsEachRunningScenario_KeepsOldResults_AndLeavesNothingBehind()
    {
        var leftovers = new Dictionary<string, Func<int, string, List<string>>>
        {
            ["shm-ring"] = (pid, _) => Directory.EnumerateFiles("/dev/shm", $"ipcbench.ring.{pid}.*").Select(Path.GetFileName).OfType<string>().ToList(),
            ["uds"] = (_, _) => [],
            ["grpc-uds"] = (_, _) => [],
            ["zeromq"] = (_, _) => [],
        };
        if (Iceoryx2Availability.SkipReason is null)
        {
            leftovers["iceoryx2"] = (pid, scenario) =>
            {
                var service = string.Create(CultureInfo.InvariantCulture, $"ipcbench/{pid}/{scenario}/all");
                return Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe) ? [service] : [];
            };
        }

        var transports = leftovers.Keys.ToList();
        // Each transport's finished scenario and its running one at once.
        var setup = Setup with { Configuration = [string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={2 * transports.Count}")] };
        var checks = new Cases();
        Dictionary<string, Scenario> old;
        Dictionary<string, string> running;
        int killedPid;
        string killedRuntime;
        await using (var first = await DaemonProcess.StartAsync(setup))
        {
            using var log = first.LogTo(output);
            // Completion without loss is what the restart must keep: a few hundred milliseconds of traffic show it. Run
            // beside the soaks below, so that both sets of agents start together; it must end before the crash.
            var finishing = Cases.RunAsync(first, transports.ToDictionary(t => t, t => Specs.Stream(t, 1, 2, Specs.Milliseconds(300)).Paced()));
            running = await Cases.AllAsync(transports, async transport =>
            {
                var started = await first.StartScenarioAsync(Specs.Stream(transport, 1, 2, duration: null).Paced(5000));
                // Past the first tick, so the database holds a running snapshot with stats and a series point.
                await first.WaitForAsync(started.Id, s => s.State == ScenarioState.Running && s.LastInterval is not null, TimeSpan.FromSeconds(30), "to run a tick");
                return started.Id;
            });
            old = await finishing;
            foreach (var (transport, scenario) in old)
            {
                checks.Check(transport, new ScenarioExpectations(scenario, first).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify);
            }

            checks.Verify();

            // The writer thread is a few milliseconds behind the tick: give it those before the crash.
            await Task.Delay(300);
            killedPid = first.Pid;
            killedRuntime = first.RuntimeDirectory;
            foreach (var transport in transports)
            {
                var agents = first.AgentsOf(running[transport]);
                _agents.AddRange(agents);
                checks.Check(transport, () => Assert.True(agents.Count == 2, $"expected 2 agents of scenario {running[transport]}, found: {string.Join("; ", agents)}"));
            }

            checks.Check("shm-ring", () => Assert.NotEmpty(leftovers["shm-ring"](killedPid, running["shm-ring"])));
            checks.Verify();
            Assert.True(Directory.Exists(killedRuntime), killedRuntime);

            await first.KillAsync();
            output.WriteLine($"killed daemon {killedPid} while scenarios {string.Join(", ", running)} ran; their agents: {string.Join("; ", _agents)}");
        }

        // Orphaned agents watch their parent and exit on their own.
        await Poll.UntilAsync(() => _agents.All(a => !a.IsAlive), TimeSpan.FromSeconds(10),
            () => $"agents still running after their daemon was killed: {string.Join("; ", _agents.Where(a => a.IsAlive))}");

        await using var second = await DaemonProcess.StartAsync(setup);
        using var secondLog = second.LogTo(output);
        foreach (var transport in transports)
        {
            var failed = await second.GetScenarioAsync(running[transport]);
            var stored = await second.GetScenarioAsync(old[transport].Id);
            checks.Check(transport, () =>
            {
                Assert.Equal(ScenarioState.Failed, failed.State);
                Assert.Equal("daemon restarted", failed.Error);
                Assert.NotNull(failed.EndedAt);
                Assert.True(failed.EndedAt.ToDateTime() >= failed.CreatedAt.ToDateTime(), failed.ToString());
                Assert.Equal(transport, failed.Spec.Transport);
                Assert.True(failed.Stats is { MessagesSent: > 0 }, $"the last stored snapshot of the killed run had no stats: {failed}");
                Assert.Equal(old[transport], stored);
                Assert.Empty(leftovers[transport](killedPid, running[transport]));
            });
        }

        checks.Verify();
        Assert.Equal(running.Values.Order(), (await IdsAsync(second, new ListScenariosRequest { State = ScenarioState.Failed })).Order());
        Assert.Contains("marked FAILED", second.Output.Text, StringComparison.Ordinal);
        Assert.False(Directory.Exists(killedRuntime), $"the killed daemon's runtime directory {killedRuntime} (its sockets) survived the restart");

        // And every transport works on the restarted daemon.
        var next = await Cases.RunAsync(second, transports.ToDictionary(t => t, t => Specs.Stream(t, 1, 2, Specs.Milliseconds(300)).Paced()));
        foreach (var (transport, scenario) in next)
        {
            checks.Check(transport, new ScenarioExpectations(scenario, second).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify);
        }

        checks.Verify();
    }

    [Fact]
    public async Task ADatabaseThatCannotBeOpened_DoesNotStopScenarios_AndIsReportedOnTheScenarioAndInMetrics()
    {
        // A regular file where the database's directory would be: even root cannot create it.
        Directory.CreateDirectory(_directory);
        var blocker = Path.Combine(_directory, "blocker");
        await File.WriteAllTextAsync(blocker, "not a directory");
        await using var daemon = await DaemonProcess.StartAsync(Setup with { DatabasePath = Path.Combine(blocker, "scenarios.db") });
        using var log = daemon.LogTo(output);

        var result = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Milliseconds(500)).Paced());

        new ScenarioExpectations(result, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
        Assert.Contains("cannot be opened", result.StorageError, StringComparison.Ordinal);
        var metrics = MetricsText.Parse(await Http.GetStringAsync(daemon.MetricsUrl));
        Assert.True(metrics.Named("ipcbench_store_write_failures_total").Single().Value > 0);
        Assert.Equal(0, metrics.Named("ipcbench_store_available").Single().Value);
        Assert.Contains(daemon.Output.Lines(0), l => l.Contains(result.Id, StringComparison.Ordinal) && l.Contains("database writes failed", StringComparison.Ordinal));

        // Still listed from memory.
        Assert.Contains(result.Id, await IdsAsync(daemon, new ListScenariosRequest()));
    }

    /// <summary>A store contract: two in-process hosts, one after the other, on one database file are the restart.</summary>
    [Fact]
    public async Task Retention_AppliesToTheDatabase_AcrossARestart()
    {
        string[] setup = [$"--IpcBench:DatabasePath={Setup.DatabasePath}", "--IpcBench:MaxRetainedScenarios=2"];
        var ids = new List<string>();
        await using (var first = await InProcessDaemon.StartAsync(setup))
        {
            using var log = first.LogTo(output);
            for (int i = 0; i < 3; i++)
            {
                ids.Add((await first.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Milliseconds(200)).Paced())).Id);
            }
        }

        await using var second = await InProcessDaemon.StartAsync(setup);
        using var secondLog = second.LogTo(output);
        Assert.Equal([ids[2], ids[1]], await IdsAsync(second, new ListScenariosRequest()));
        var gone = await Assert.ThrowsAsync<RpcException>(() => second.GetScenarioAsync(ids[0]));
        Assert.Equal(StatusCode.NotFound, gone.StatusCode);
    }

    [Fact]
    public async Task CompareScenarios_OfTwoRealRuns_AndItsRefusals()
    {
        await using var daemon = await DaemonProcess.StartAsync(Setup);
        using var log = daemon.LogTo(output);
        var spec = Specs.Stream("uds", 1, 1, Specs.Seconds(1)).Paced();
        // Side by side: a comparison reads two finished records, whenever they ran.
        var runs = await Cases.RunAsync(daemon, new Dictionary<string, ScenarioSpec> { ["baseline"] = spec, ["candidate"] = spec.With(s => s.PayloadBytes = 128) });
        var (baseline, candidate) = (runs["baseline"], runs["candidate"]);

        var result = await daemon.CompareScenariosAsync(new CompareScenariosRequest { BaselineId = baseline.Id, CandidateId = candidate.Id });

        Assert.Equal(5, result.ThresholdPercent);
        Assert.Equal(baseline.Id, result.Baseline.Id);
        Assert.Equal(candidate.Id, result.Candidate.Id);
        var rate = result.Metrics.Single(m => m.Metric == "messages_per_second");
        Assert.Equal(baseline.Stats.MessagesPerSecond, rate.Baseline);
        Assert.Equal(candidate.Stats.MessagesPerSecond, rate.Candidate);
        Assert.Equal(candidate.Stats.MessagesPerSecond / baseline.Stats.MessagesPerSecond, rate.Ratio, 9);
        Assert.Contains(result.Metrics, m => m.Metric == "cpu_per_message_agent" && m.Baseline > 0);
        Assert.Contains(result.Metrics, m => m.Metric == "latency_p999");
        Assert.NotEqual(ComparisonVerdict.Unspecified, result.Verdict);
        Assert.Contains("payload_bytes: 64 vs 128", result.Notes);

        var self = await daemon.CompareScenariosAsync(new CompareScenariosRequest { BaselineId = baseline.Id, CandidateId = baseline.Id, ThresholdPercent = 1 });
        // A busy machine can make the run itself invalid (noise, a rate not delivered): then no verdict, and the note says why.
        Assert.Equal(baseline.Stats.Validity.Count == 0 ? ComparisonVerdict.Same : ComparisonVerdict.Inconclusive, self.Verdict);
        Assert.Equal(baseline.Stats.Validity.Count * 2, self.Notes.Count(n => n.Contains(" is not a valid measurement: ", StringComparison.Ordinal)));

        var unknown = await Assert.ThrowsAsync<RpcException>(() => daemon.CompareScenariosAsync(new CompareScenariosRequest { BaselineId = baseline.Id, CandidateId = "ffffffffffff" }));
        Assert.Equal(StatusCode.NotFound, unknown.StatusCode);
        Assert.Equal("candidate_id: no scenario 'ffffffffffff'", unknown.Status.Detail);

        var soak = await daemon.StartScenarioAsync(Specs.Stream("channels", 1, 1, duration: null).Paced(1000));
        var notFinished = await Assert.ThrowsAsync<RpcException>(() => daemon.CompareScenariosAsync(new CompareScenariosRequest { BaselineId = soak.Id, CandidateId = baseline.Id }));
        Assert.Equal(StatusCode.FailedPrecondition, notFinished.StatusCode);
        Assert.StartsWith("baseline_id: ", notFinished.Status.Detail, StringComparison.Ordinal);
        await daemon.StopScenarioAsync(soak.Id);

        var threshold = await Assert.ThrowsAsync<RpcException>(() => daemon.CompareScenariosAsync(new CompareScenariosRequest { BaselineId = baseline.Id, CandidateId = baseline.Id, ThresholdPercent = 2000 }));
        Assert.Equal(StatusCode.InvalidArgument, threshold.StatusCode);
        Assert.StartsWith("threshold_percent: ", threshold.Status.Detail, StringComparison.Ordinal);
    }

    private static async Task<List<string>> IdsAsync(DaemonClient daemon, ListScenariosRequest request) =>
        [.. (await daemon.ListScenariosAsync(request)).Scenarios.Select(s => s.Id)];
}
