using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.Iceoryx2;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The iceoryx2 transport end to end: publishers in the daemon, subscribers in BenchAgent processes, every scenario
/// feature, an agent and a daemon killed with SIGKILL (their iceoryx2 state must not outlive the next clean-up), and a
/// daemon whose native library is missing.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class Iceoryx2ScenarioTests(ConcurrentDaemon shared, ITestOutputHelper output) : IClassFixture<ConcurrentDaemon>, IDisposable
{
    private const string Transport = "iceoryx2";

    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Iceoryx2Fact]
    public async Task ListTransports_ReportsIceoryx2AsAvailableCrossProcessAndZeroCopy()
    {
        var info = (await _daemon.ListTransportsAsync()).SingleOrDefault(t => t.Id == Transport);

        Assert.NotNull(info);
        Assert.True(info.Available, info.UnavailableReason);
        Assert.Equal(string.Empty, info.UnavailableReason);
        Assert.True(info.CrossProcess);
        Assert.True(info.ZeroCopy);
        Assert.True(info.SupportsRoundTrip);
        Assert.Equal([WaitStrategy.Spin, WaitStrategy.Yield, WaitStrategy.Block], info.WaitStrategies);
        Assert.Equal(WaitStrategy.Yield, info.DefaultWaitStrategy);
    }

    /// <summary>
    /// The streaming features, each a case of its own, run at once (their waits overlap): all-to-all through one service,
    /// paired services, round trips over reply services, and wait strategies with payload access. Each case's result and
    /// the removal of its services are checked on their own and named when they fail. Delivery is the point, not
    /// throughput, so all but all-to-all (whose rate and latency are read) send for a few hundred milliseconds.
    /// </summary>
    [Iceoryx2Fact]
    public async Task StreamingFeatures_AtOnce_DeliverWithoutLoss_AndTheirServicesGo()
    {
        var cases = new Dictionary<string, (ScenarioSpec Spec, Action<Scenario> Verify, string[] Services)>
        {
            ["all-to-all 2x3"] = (Specs.Stream(Transport, publishers: 2, subscribers: 3, Specs.Seconds(1), Specs.Milliseconds(200), payloadBytes: 1024), result =>
            {
                var expect = new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 3);
                expect.Equal(WaitStrategy.Yield, result.Spec.WaitStrategy, "spec.wait_strategy (iceoryx2's default)")
                    .Equal(4, expect.Stats.Processes.Count, "processes (daemon + 3 agents)")
                    .That(expect.Stats.Latency is { Samples: > 0, Kind: LatencyKind.OneWay }, "one-way latency samples > 0")
                    .That(expect.Stats.MessagesPerSecond > 0, "messages_per_second > 0")
                    .Verify();
            }, ["all"]),
            ["paired 3x3"] = (Specs.Stream(Transport, publishers: 3, subscribers: 3, Specs.Milliseconds(300), Specs.Milliseconds(100))
                .With(s => s.Topology = Topology.Paired), result => new ScenarioExpectations(result, _daemon)
                    .CompletedWithoutLoss(subscribersPerPublisher: 1)
                    .Equal(Topology.Paired, result.Spec.Topology, "spec.topology")
                    .Verify(), ["p0", "p1", "p2"]),
            ["round trip, yield, 1x1"] = RoundTrip(WaitStrategy.Yield, publishers: 1, subscribers: 1),
            ["round trip, block, 1x2"] = RoundTrip(WaitStrategy.Block, publishers: 1, subscribers: 2),
            ["block, full payload, 64 KiB, 2x2"] = WaitAndAccess(WaitStrategy.Block, PayloadAccess.Full, 65536),
            ["spin, header only, 512 KiB, 2x2"] = WaitAndAccess(WaitStrategy.Spin, PayloadAccess.HeaderOnly, 512 * 1024),
        };
        Assert.InRange(cases.Count, 1, ConcurrentDaemon.MaxCases);

        var results = await Cases.RunAsync(_daemon, cases.ToDictionary(c => c.Key, c => c.Value.Spec));

        var checks = new Cases();
        foreach (var (name, result) in results)
        {
            checks.Check(name, () => cases[name].Verify(result));
        }

        checks.Verify();
        await Cases.AllAsync(cases.Keys, name => AssertServicesGoneAsync(results[name], cases[name].Services));
    }

    private (ScenarioSpec, Action<Scenario>, string[]) RoundTrip(WaitStrategy wait, int publishers, int subscribers)
    {
        var spec = Specs.Stream(Transport, publishers, subscribers, Specs.Milliseconds(300), Specs.Milliseconds(100), payloadBytes: 8)
            .With(s =>
            {
                s.Mode = Mode.RoundTrip;
                s.WaitStrategy = wait;
            });
        return (spec, result =>
        {
            var expect = new ScenarioExpectations(result, _daemon);
            expect.Equal(ScenarioState.Completed, result.State, "state")
                .That(expect.Stats.MessagesSent > 0, "messages_sent > 0")
                .Equal(expect.Stats.MessagesSent * (ulong)subscribers, expect.Stats.MessagesReceived, "messages_received (one per subscriber)")
                .Equal(0UL, expect.Stats.MessagesLost, "messages_lost")
                .Equal(0UL, expect.Stats.MessagesCorrupted, "messages_corrupted (bad echoes included)")
                .RoundTripLatencyMeasured()
                .Verify();
        }, ["all", "all/reply0"]);
    }

    private (ScenarioSpec, Action<Scenario>, string[]) WaitAndAccess(WaitStrategy wait, PayloadAccess access, int payloadBytes)
    {
        var spec = Specs.Stream(Transport, publishers: 2, subscribers: 2, Specs.Milliseconds(300), Specs.Milliseconds(100), payloadBytes)
            .With(s =>
            {
                s.WaitStrategy = wait;
                s.PayloadAccess = access;
            });
        return (spec, result => new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 2)
            .Equal(wait, result.Spec.WaitStrategy, "spec.wait_strategy")
            .Equal(access, result.Spec.PayloadAccess, "spec.payload_access")
            .Verify(), []);
    }

    [Iceoryx2Fact]
    public async Task RateLimited_DeliversTheRequestedRate()
    {
        const double rate = 2000;
        var spec = Specs.Stream(Transport, publishers: 1, subscribers: 1, Specs.Seconds(2), Specs.Milliseconds(300))
            .With(s =>
            {
                s.RatePerPublisher = rate;
                s.WaitStrategy = WaitStrategy.Block;
            });

        var result = await _daemon.RunScenarioAsync(spec);

        new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 1)
            .Between(rate * 0.95, rate * 1.05, result.Stats?.MessagesPerSecond ?? 0, "messages_per_second (2000 ± 5 %)")
            .Verify();
    }

    [Iceoryx2Fact]
    public async Task AgentKilledMidRun_FailsTheScenarioNamingTheAgent_LeavesNoIceoryx2State_AndTheNextScenarioRuns()
    {
        await using var daemon = await DaemonProcess.StartAsync();
        using var log = daemon.LogTo(output);
        var started = await daemon.StartScenarioAsync(Specs.Stream(Transport, publishers: 2, subscribers: 2, duration: TimeSpan.FromSeconds(60)));
        await daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
        string service = DataService(daemon.Pid, started.Id, "all");
        Assert.True(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe), $"{service} does not exist while the scenario runs");
        var agents = daemon.Agents();
        Assert.True(agents.Count == 2, $"Expected 2 agent children, found: {string.Join("; ", agents)}.\n{daemon.Output.Describe()}");

        // Its subscriber port stays registered in the service (and its queue fills) until the dead node is cleaned up.
        var victim = agents[^1];
        ProcessTree.Signal(victim.Pid, ProcessTree.SigKill);
        var failed = await daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));

        new ScenarioExpectations(failed, daemon)
            .Equal(ScenarioState.Failed, failed.State, "state")
            .That(failed.Error.Contains("agent", StringComparison.Ordinal), "error contains \"agent\"")
            .That(failed.Error.Contains(victim.Pid.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal), $"error contains the killed agent's pid {victim.Pid}")
            .Verify();

        // The publishers, the surviving agent and the dead agent's ports all go: the service with them.
        await Poll.UntilAsync(() => daemon.Agents().Count == 0 && !Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe),
            TimeSpan.FromSeconds(20), () => $"agents ({string.Join("; ", daemon.Agents())}) or iceoryx2 service {service} still there after the scenario failed\n{daemon.Output.Describe()}");

        var next = await daemon.RunScenarioAsync(Specs.Stream(Transport, publishers: 2, subscribers: 2, Specs.Milliseconds(300)));
        new ScenarioExpectations(next, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
    }

    [Iceoryx2Fact]
    public async Task DaemonAndAgentsKilledMidRun_TheirIceoryx2StateIsCleanedByTheNextDaemon()
    {
        string service;
        List<ProcessEntry> agents;
        var first = await DaemonProcess.StartAsync();
        await using (first)
        {
            using var log = first.LogTo(output);
            var started = await first.StartScenarioAsync(Specs.Stream(Transport, publishers: 1, subscribers: 2, duration: null)
                .With(s => s.WaitStrategy = WaitStrategy.Block));
            await first.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
            service = DataService(first.Pid, started.Id, "all");
            agents = [.. first.Agents()];
            Assert.True(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe), $"{service} does not exist while the scenario runs");

            // The whole tree at once: an agent that outlived its daemon would dispose its node, and dropping a node
            // cleans dead nodes too (iceoryx2's default), which would hide what the next daemon's start-up does.
            ProcessTree.Signal(first.Pid, ProcessTree.SigKill);
            agents.ForEach(a => ProcessTree.SignalIfAlive(a, ProcessTree.SigKill));
            await Poll.UntilAsync(() => agents.All(a => !a.IsAlive), TimeSpan.FromSeconds(20),
                () => $"agents still running after they were killed: {string.Join("; ", agents.Where(a => a.IsAlive))}");
            if (!Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe))
            {
                // Another process created an iceoryx2 node meanwhile (which cleans dead nodes too): nothing to prove below.
                output.WriteLine($"{service} was already cleaned up by another process; the start-up clean-up is not observable this time");
            }
        }

        await using var second = await DaemonProcess.StartAsync();
        using var secondLog = second.LogTo(output);
        Assert.False(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe),
            $"{service} of the killed daemon survived the next daemon's start-up clean-up\n{second.Output.Describe()}");
        var next = await second.RunScenarioAsync(Specs.Stream(Transport, publishers: 1, subscribers: 2, Specs.Milliseconds(300)));
        new ScenarioExpectations(next, second).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
    }

    /// <summary>The scenario's iceoryx2 services (as ServiceLayout names them) go once it ended and its agents exited.</summary>
    private async Task AssertServicesGoneAsync(Scenario result, params string[] suffixes)
    {
        var services = suffixes.Select(suffix => DataService(_daemon.Pid, result.Id, suffix)).ToList();
        await Poll.UntilAsync(() => !services.Any(s => Iceoryx2Library.ServiceExists(s, Iceoryx2MessagingPattern.PublishSubscribe)), TimeSpan.FromSeconds(10),
            () => $"iceoryx2 services still exist after the scenario ended: {string.Join(", ", services.Where(s => Iceoryx2Library.ServiceExists(s, Iceoryx2MessagingPattern.PublishSubscribe)))}");
    }

    private static string DataService(int daemonPid, string scenarioId, string suffix) =>
        string.Create(CultureInfo.InvariantCulture, $"ipcbench/{daemonPid}/{scenarioId}/{suffix}");
}

/// <summary>Skipped (with the reason) when libipcbench_iox2.so is unavailable, unless IPCBENCH_REQUIRE_ICEORYX2=1.</summary>
public sealed class Iceoryx2FactAttribute : FactAttribute
{
    public Iceoryx2FactAttribute() => Skip = Iceoryx2Availability.SkipReason;
}

/// <inheritdoc cref="Iceoryx2FactAttribute"/>
public sealed class Iceoryx2TheoryAttribute : TheoryAttribute
{
    public Iceoryx2TheoryAttribute() => Skip = Iceoryx2Availability.SkipReason;
}

internal static class Iceoryx2Availability
{
    public static string? SkipReason =>
        !Iceoryx2Library.IsAvailable && Environment.GetEnvironmentVariable("IPCBENCH_REQUIRE_ICEORYX2") != "1"
            ? $"iceoryx2 unavailable: {Iceoryx2Library.UnavailableReason}"
            : null;
}
