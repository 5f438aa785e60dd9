using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using IpcBench.Workload.Placement;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A suite's placement and noise bound: validation naming the suite's field, GetSuite showing back what ran (also after
/// a restart, from the store), and a cell retried while side processes keep the machine busier than max_noise_percent
/// allows. The contracts run on in-process hosts with channels cells; the retried cell runs on a real daemon with an
/// agent, whose release after every attempt is part of what it checks. Short and rate-limited: nothing spins beside the
/// busy loops the noise tests need.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SuitePlacementTests(SharedInProcessDaemon shared, ITestOutputHelper output) : IClassFixture<SharedInProcessDaemon>, IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(180);
    private readonly DaemonDirectory _state = new("suiteplace");
    private readonly InProcessDaemon _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose()
    {
        _log.Dispose();
        _state.Dispose();
    }

    [Theory]
    [InlineData("""{"publisher_cpus":"4096"}""", "spec.publisher_cpus: ")]
    [InlineData("""{"subscriber_cpus":"1-x"}""", "spec.subscriber_cpus: ")]
    [InlineData("""{"realtime_priority":100}""", "spec.realtime_priority: cell channels 8 B 1:1: must be 0 (normal scheduling) to 99")]
    [InlineData("""{"max_noise_percent":0}""", "spec.max_noise_percent: must be greater than 0 and at most 100")]
    [InlineData("""{"max_noise_percent":100.5}""", "spec.max_noise_percent: must be greater than 0 and at most 100")]
    public async Task StartSuite_RefusesBadPlacement_NamingTheSuitesField(string placement, string expected)
    {
        var daemon = _daemon;
        var spec = Google.Protobuf.JsonParser.Default.Parse<SuiteSpec>(placement);
        spec.Transports.Add("channels");
        spec.PayloadBytes.Add(8);
        spec.Duration = Duration.FromTimeSpan(Specs.Seconds(0.2));

        var e = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.StartSuiteAsync(new StartSuiteRequest { Spec = spec }));

        output.WriteLine(e.Status.Detail);
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.StartsWith(expected, e.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task StartSuite_WithAPreset_TakesPlacement_AndRefusesABadOneNamingTheField()
    {
        var daemon = _daemon;
        var bad = new SuiteSpec { Preset = "reference-1", PublisherCpus = "4096" };

        var e = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.StartSuiteAsync(new StartSuiteRequest { Spec = bad }));

        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.StartsWith("spec.publisher_cpus: ", e.Status.Detail, StringComparison.Ordinal);

        var cpu = AllowedCpus.OfThisProcess().Allowed.Cpus[0];
        var started = await daemon.Control.StartSuiteAsync(new StartSuiteRequest
        {
            Spec = new SuiteSpec { Preset = "reference-1", PublisherCpus = $"{cpu}", MaxNoisePercent = 100, Duration = Duration.FromTimeSpan(Specs.Seconds(0.2)) },
        });
        var stopped = await daemon.Control.StopSuiteAsync(new StopSuiteRequest { Id = started.Id });

        Assert.Equal("reference-1", stopped.Spec.Preset);
        Assert.Equal($"{cpu}", stopped.Spec.PublisherCpus);
        Assert.Equal(100, stopped.Spec.MaxNoisePercent);
        Assert.All(stopped.Cells, c => Assert.Equal($"{cpu}", c.Spec.PublisherCpus));
    }

    [Fact]
    public async Task GetSuite_ShowsBackThePlacementEveryCellRanWith_AlsoFromTheStoreAfterARestart()
    {
        var (pub, sub) = TwoCpus();
        var spec = Matrix("channels", 0.2);
        spec.PublisherCpus = $"{pub}";
        spec.SubscriberCpus = $"{sub}";
        spec.MaxNoisePercent = 100;
        // A host restarted on the same database: the second one reads the suite from the store.
        var database = $"--IpcBench:DatabasePath={Path.Combine(_state.Path, "scenarios.db")}";
        Directory.CreateDirectory(_state.Path);
        string id;
        await using (var first = await InProcessDaemon.StartAsync(database))
        {
            using var log = first.LogTo(output);
            var suite = await RunAsync(first, spec);

            Assert.Equal(SuiteState.Completed, suite.State);
            AssertPlacement(suite);
            // Each cell's scenario ran where the suite said.
            var scenario = await first.GetScenarioAsync(Assert.Single(suite.Cells[0].ScenarioIds));
            Assert.Equal($"{pub}", scenario.Spec.PublisherCpus);
            Assert.Equal($"{sub}", scenario.Spec.SubscriberCpus);
            Assert.Equal(100, scenario.Spec.MaxNoisePercent);
            id = suite.Id;
        }

        await using var second = await InProcessDaemon.StartAsync(database);
        AssertPlacement(await second.Control.GetSuiteAsync(new GetSuiteRequest { Id = id }));

        void AssertPlacement(Suite suite)
        {
            Assert.Equal($"{pub}", suite.Spec.PublisherCpus);
            Assert.Equal($"{sub}", suite.Spec.SubscriberCpus);
            Assert.True(suite.Spec.HasMaxNoisePercent, suite.Spec.ToString());
            Assert.Equal(100, suite.Spec.MaxNoisePercent);
            Assert.False(suite.Spec.HasRealtimePriority, suite.Spec.ToString());
            Assert.False(suite.Spec.HasLockMemory, suite.Spec.ToString());
            Assert.All(suite.Cells, c => Assert.Equal(0, c.NoiseRetries));
        }
    }

    [Fact]
    public async Task ACellTooNoisy_IsRetriedTwice_MarkedInEveryReport_AndLeavesNothingBehind()
    {
        await using var daemon = await DaemonProcess.StartAsync(_state.Settings);
        using var log = daemon.LogTo(output);
        var spec = Matrix("uds", 0.3);
        spec.RatePerPublisher = 1000;
        spec.WaitStrategies.Add(WaitStrategy.Block);
        spec.MaxNoisePercent = 0.001;

        Suite suite;
        using (new BusyProcesses(2))
        {
            suite = await RunAsync(daemon, spec);
        }

        output.WriteLine(suite.ToString());
        Assert.Equal(SuiteState.Completed, suite.State);
        var cell = Assert.Single(suite.Cells);
        Assert.Equal(2, cell.NoiseRetries);
        Assert.True(cell.FailedNoisy, cell.ToString());
        Assert.Equal(3, cell.NoisyAttempts.Count);
        Assert.Equal([true, true, false], cell.NoisyAttempts.Select(a => a.Retried));
        Assert.All(cell.NoisyAttempts, a => Assert.Equal(1, a.Round));
        Assert.All(cell.NoisyAttempts, a => Assert.True(a.NoisePercent > 0.001, a.ToString()));
        // The round's figures are its last attempt's; progress counted every attempt.
        Assert.Equal(cell.NoisyAttempts[2].ScenarioId, Assert.Single(cell.ScenarioIds));
        Assert.Equal(3, suite.ScenariosTotal);
        Assert.Equal(3, suite.ScenariosDone);

        var listed = (await daemon.ListScenariosAsync(new ListScenariosRequest { SuiteId = suite.Id })).Scenarios;
        Assert.Equal(cell.NoisyAttempts.Select(a => a.ScenarioId).Order(), listed.Select(s => s.Id).Order());
        Assert.All(listed, s => Assert.Equal(ScenarioState.Failed, s.State));
        Assert.All(listed, s => Assert.StartsWith("max_noise_percent: ", s.Error, StringComparison.Ordinal));
        var noise = cell.NoisyAttempts.Take(2).Select(a => $"{Math.Round(a.NoisePercent, 1).ToString("0.###", System.Globalization.CultureInfo.InvariantCulture)} %");
        string mark = $"noisy: retried 2x (noise {string.Join(", ", noise)}); failed-noisy";

        Assert.Contains(mark, await ExportAsync(daemon, suite.Id, ReportFormat.Markdown), StringComparison.Ordinal);
        Assert.Contains(mark, await ExportAsync(daemon, suite.Id, ReportFormat.Html), StringComparison.Ordinal);
        var json = System.Text.Json.JsonDocument.Parse(await ExportAsync(daemon, suite.Id, ReportFormat.Json)).RootElement.GetProperty("cells")[0];
        Assert.Equal(mark, json.GetProperty("noise").GetProperty("text").GetString());
        Assert.Equal(3, json.GetProperty("noisy_attempts").GetArrayLength());
        var csv = CsvTable.Parse(await ExportAsync(daemon, suite.Id, ReportFormat.Csv));
        var median = csv.Rows.Single(r => csv.Get(r, "repetition") == "median");
        Assert.Equal("2", csv.Get(median, "noise_retries"));
        Assert.Equal("true", csv.Get(median, "failed_noisy"));

        // Every attempt released its agent and sockets before the next began, and none is left now.
        await Poll.UntilAsync(() => daemon.Agents().Count == 0, TimeSpan.FromSeconds(10), () => $"agents left: {string.Join("; ", daemon.Agents())}");
        var entries = Directory.Exists(daemon.RuntimeDirectory)
            ? Directory.EnumerateFileSystemEntries(daemon.RuntimeDirectory, "*", SearchOption.AllDirectories).ToList()
            : [];
        Assert.DoesNotContain(entries, e => listed.Any(s => e.Contains(s.Id, StringComparison.Ordinal)));
    }

    [Fact]
    public async Task ACellWithinItsNoiseBound_IsNotRetried()
    {
        var daemon = _daemon;
        var spec = Matrix("channels", 0.2);
        spec.MaxNoisePercent = 100;

        // Busy or not, others' share of the machine cannot exceed 100 %.
        Suite suite;
        using (new BusyProcesses(1))
        {
            suite = await RunAsync(daemon, spec);
        }

        Assert.Equal(SuiteState.Completed, suite.State);
        var cell = Assert.Single(suite.Cells);
        Assert.Equal(0, cell.NoiseRetries);
        Assert.False(cell.FailedNoisy);
        Assert.Empty(cell.NoisyAttempts);
        Assert.Equal(1, suite.ScenariosTotal);
        Assert.Single((await daemon.ListScenariosAsync(new ListScenariosRequest { SuiteId = suite.Id })).Scenarios);
        Assert.DoesNotContain("noisy", await ExportAsync(daemon, suite.Id, ReportFormat.Markdown), StringComparison.Ordinal);
    }

    /// <summary>CPUs 0 and 1 when the daemon may use both (the usual case); else the first two it may use.</summary>
    private static (int Publisher, int Subscriber) TwoCpus()
    {
        var allowed = AllowedCpus.OfThisProcess().Allowed;
        return allowed.Contains(0) && allowed.Contains(1) ? (0, 1) : (allowed.Cpus[0], allowed.Cpus[allowed.Count > 1 ? 1 : 0]);
    }

    private static SuiteSpec Matrix(string transport, double seconds)
    {
        var spec = new SuiteSpec { Duration = Duration.FromTimeSpan(Specs.Seconds(seconds)), Warmup = Duration.FromTimeSpan(Specs.Milliseconds(200)) };
        spec.Transports.Add(transport);
        spec.PayloadBytes.Add(8);
        return spec;
    }

    private static async Task<string> ExportAsync(DaemonClient daemon, string id, ReportFormat format) =>
        (await daemon.Control.ExportSuiteAsync(new ExportSuiteRequest { Id = id, Format = format })).Content;

    private static async Task<Suite> RunAsync(DaemonClient daemon, SuiteSpec spec)
    {
        var started = await daemon.Control.StartSuiteAsync(new StartSuiteRequest { Spec = spec });
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Suite suite = started.Suite;
        while (clock.Elapsed < Timeout)
        {
            suite = await daemon.Control.GetSuiteAsync(new GetSuiteRequest { Id = started.Id });
            if (suite.State is SuiteState.Completed or SuiteState.Stopped or SuiteState.Failed)
            {
                return suite;
            }

            await Task.Delay(100);
        }

        throw new Xunit.Sdk.XunitException($"suite {started.Id} did not finish in {Timeout}: {suite}");
    }
}
