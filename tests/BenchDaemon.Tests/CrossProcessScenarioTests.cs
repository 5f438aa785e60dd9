using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>Scenarios on the transports whose subscribers run in BenchAgent processes, started and read through gRPC.</summary>
[Collection(DaemonCollection.Name)]
public sealed class CrossProcessScenarioTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public static TheoryData<string> CrossProcessTransports => RegisteredTransports.CrossProcess();

    public static TheoryData<string> RoundTripTransports => RegisteredTransports.CrossProcessWithRoundTrip();

    public void Dispose() => _log.Dispose();

    [Theory]
    [MemberData(nameof(CrossProcessTransports))]
    public async Task AllToAll_2x3_DeliversEveryMessageToEveryAgent(string transport)
    {
        var result = await _daemon.RunScenarioAsync(Specs.Stream(transport, publishers: 2, subscribers: 3, Specs.Seconds(1), Specs.Milliseconds(200)));

        var expect = new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 3);
        var stats = expect.Stats;
        expect.Equal(transport, result.Spec.Transport, "spec.transport");
        expect.Equal(Topology.AllToAll, result.Spec.Topology, "spec.topology (defaulted)");
        expect.That(stats.Latency is { Samples: > 0 }, "latency.samples > 0");
        expect.Equal(LatencyKind.OneWay, stats.Latency?.Kind ?? LatencyKind.Unspecified, "latency.kind");
        expect.That(stats.MessagesPerSecond > 0, "messages_per_second > 0");
        expect.That(stats.MeasuredMessages > 0, "measured_messages > 0");

        var daemons = stats.Processes.Where(p => p.Role == "daemon").ToList();
        var agents = stats.Processes.Where(p => p.Role == "agent").OrderBy(p => p.Index).ToList();
        expect.Equal(4, stats.Processes.Count, "processes (daemon + 3 agents)");
        expect.Equal(1, daemons.Count, "daemon process entries");
        expect.That(daemons.All(d => d.Pid == _daemon.Pid && d.Index == -1), $"the daemon entry has the daemon's pid {_daemon.Pid} and index -1");
        expect.Equal("0,1,2", string.Join(',', agents.Select(a => a.Index)), "agent indexes");
        expect.Equal(4, stats.Processes.Select(p => p.Pid).Distinct().Count(), "distinct pids");
        expect.That(agents.All(a => a.Pid > 0 && a.Pid != _daemon.Pid), "agent pids are set and not the daemon's");
        foreach (var process in stats.Processes)
        {
            expect.Between(0, 250, process.CpuPercent, $"cpu_percent of {process.Role} {process.Index} (pid {process.Pid})");
            expect.That(process.PeakRssBytes > 0, $"peak_rss_bytes of {process.Role} {process.Index} > 0");
        }

        var environment = result.Environment;
        expect.That(environment is not null, "environment is present");
        expect.That(environment?.LogicalCores > 0, "environment.logical_cores > 0");
        expect.That(!string.IsNullOrWhiteSpace(environment?.CpuModel), "environment.cpu_model is set");
        expect.Equal(File.ReadAllText("/proc/sys/kernel/osrelease").Trim(), environment?.Kernel, "environment.kernel (uname -r)");
        expect.That(!string.IsNullOrWhiteSpace(environment?.DotnetVersion), "environment.dotnet_version is set");
        expect.Verify();
    }

    [Theory]
    [MemberData(nameof(CrossProcessTransports))]
    public async Task Paired_3x3_DeliversEachMessageToItsOneSubscriber(string transport)
    {
        var spec = Specs.Stream(transport, publishers: 3, subscribers: 3, Specs.Seconds(1), Specs.Milliseconds(100))
            .With(s => s.Topology = Topology.Paired);

        var result = await _daemon.RunScenarioAsync(spec);

        new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 1)
            .Equal(Topology.Paired, result.Spec.Topology, "spec.topology")
            .Equal(4, result.Stats?.Processes.Count ?? 0, "processes (daemon + 3 agents)")
            .Verify();
    }

    [Theory]
    [MemberData(nameof(RoundTripTransports))]
    public async Task RoundTrip_ReportsRoundTripLatency(string transport)
    {
        var spec = Specs.Stream(transport, publishers: 1, subscribers: 1, Specs.Seconds(1), Specs.Milliseconds(100))
            .With(s => s.Mode = Mode.RoundTrip);

        var result = await _daemon.RunScenarioAsync(spec);

        var expect = new ScenarioExpectations(result, _daemon);
        var latency = expect.Stats.Latency ?? new LatencyStats();
        expect.Equal(ScenarioState.Completed, result.State, "state")
            .Equal(Mode.RoundTrip, result.Spec.Mode, "spec.mode")
            .That(expect.Stats.MessagesSent > 0, "messages_sent > 0")
            .Equal(0UL, expect.Stats.MessagesLost, "messages_lost")
            .Equal(0UL, expect.Stats.MessagesCorrupted, "messages_corrupted")
            .Equal(LatencyKind.RoundTrip, latency.Kind, "latency.kind")
            .That(latency.Samples > 0, "latency.samples > 0")
            .That(latency.P50 is not null && latency.P50.ToTimeSpan() > TimeSpan.Zero, "latency.p50 > 0")
            .That(latency.P99 is not null && latency.P99.ToTimeSpan() >= latency.P50?.ToTimeSpan(), "latency.p99 >= p50")
            .Verify();
    }

    [Theory]
    [MemberData(nameof(CrossProcessTransports))]
    public async Task RateLimited_DeliversTheRequestedRate(string transport)
    {
        const double rate = 2000;
        var spec = Specs.Stream(transport, publishers: 1, subscribers: 1, Specs.Seconds(2), Specs.Milliseconds(300))
            .With(s => s.RatePerPublisher = rate);

        var result = await _daemon.RunScenarioAsync(spec);

        new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 1)
            .Between(rate * 0.95, rate * 1.05, result.Stats?.MessagesPerSecond ?? 0, "messages_per_second (2000 ± 5 %)")
            .Verify();
    }
}
