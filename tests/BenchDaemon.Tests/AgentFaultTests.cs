using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// An agent killed (SIGKILL) or frozen (SIGSTOP, caught by the heartbeat timeout) in the middle of a run, on every
/// cross-process transport: the scenario fails naming the agent, its publishers do not hang, nothing of it stays
/// alive, and the next scenario on the same daemon succeeds. One daemon runs every (transport, signal) case's scenario
/// at once, so each scenario's failure must also stay its own: the other victims must not fail it, and the killed
/// ones' errors (which must say SIGKILL) show that no live agent was taken for a frozen one meanwhile.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class AgentFaultTests(ITestOutputHelper output)
{
    /// <summary>
    /// Long enough that no live agent misses it while every case's agents start and run at once on a loaded 2-core
    /// machine (reports come once a second; a miss would fail a scenario naming the wrong pid, or not saying SIGKILL),
    /// short enough that waiting for the frozen ones costs little: all cases wait for it together.
    /// </summary>
    private const int HeartbeatTimeoutSeconds = 5;

    [Fact]
    public async Task AgentKilledOrStoppedMidRun_OnEveryTransportAtOnce_FailsEachScenario_AndTheNextOnesSucceed()
    {
        var transports = RegisteredTransports.CrossProcessIds.ToList();
        var signals = new Dictionary<string, (string Transport, int Signal)>();
        foreach (var transport in transports)
        {
            signals[$"{transport} SIGKILL"] = (transport, ProcessTree.SigKill);
            signals[$"{transport} SIGSTOP"] = (transport, ProcessTree.SigStop);
        }

        var cases = signals.Keys.ToList();
        // Twice the cases: a finished scenario holds its slot until its teardown ends, a moment after it reads FAILED.
        await using var daemon = await DaemonProcess.StartAsync(
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:HeartbeatTimeoutSeconds={HeartbeatTimeoutSeconds}"),
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={2 * cases.Count}"),
            // iceoryx2's publisher gives up on a full subscriber after its send timeout (5 s by default), naming no agent:
            // at twice the heartbeat timeout, a frozen agent is always found by the heartbeat first, as the case expects.
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:Transports:iceoryx2:SendTimeout={TimeSpan.FromSeconds(2 * HeartbeatTimeoutSeconds)}"));
        using var log = daemon.LogTo(output);
        // Closed loop: the publisher is most likely blocked on the victim's full queue when it goes, the case that hangs.
        var started = await Cases.AllAsync(cases, async name =>
        {
            var scenario = await daemon.StartScenarioAsync(Specs.Stream(signals[name].Transport, publishers: 1, subscribers: 2, duration: TimeSpan.FromSeconds(60), payloadBytes: 1024));
            await daemon.WaitForStateAsync(scenario.Id, ScenarioState.Running, TimeSpan.FromSeconds(60));
            return scenario;
        });

        var victims = new Dictionary<string, ProcessEntry>();
        var checks = new Cases();
        foreach (var (name, scenario) in started)
        {
            var agents = daemon.AgentsOf(scenario.Id);
            checks.Check(name, () => Assert.True(agents.Count == 2, $"Expected 2 agents of scenario {scenario.Id}, found: {string.Join("; ", agents)}.\n{daemon.Output.Describe()}"));
            if (agents.Count > 0)
            {
                victims[name] = agents[^1];
            }
        }

        checks.Verify();
        var clock = Stopwatch.StartNew();
        foreach (var (name, victim) in victims)
        {
            ProcessTree.Signal(victim.Pid, signals[name].Signal);
        }

        var failed = await Cases.AllAsync(cases, async name =>
        {
            var scenario = await daemon.WaitUntilFinishedAsync(started[name].Id, TimeSpan.FromSeconds(HeartbeatTimeoutSeconds + 20));
            output.WriteLine($"{name}: {scenario.State} {clock.ElapsedMilliseconds} ms after the signal to {victims[name].Pid}: {scenario.Error}");
            return scenario;
        });

        foreach (var (name, scenario) in failed)
        {
            var victim = victims[name];
            var expect = new ScenarioExpectations(scenario, daemon)
                .Equal(ScenarioState.Failed, scenario.State, "state")
                .That(scenario.Error.Contains(victim.Pid.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal), $"error names the victim's pid {victim.Pid}")
                .That(scenario.EndedAt is not null, "ended_at is set");
            if (signals[name].Signal == ProcessTree.SigStop)
            {
                expect.That(scenario.Error.Contains("sent no report", StringComparison.Ordinal), "error says the agent stopped reporting (heartbeat)");
            }
            else
            {
                expect.That(scenario.Error.Contains("SIGKILL", StringComparison.Ordinal), "error says the agent was killed by SIGKILL");
            }

            checks.Check(name, expect.Verify);
        }

        checks.Verify();

        // The stopped agents too: a frozen process must be killed, not left behind holding its sockets and mappings.
        await Poll.UntilAsync(() => daemon.Agents().Count == 0, TimeSpan.FromSeconds(10),
            () => $"agents still running after the scenarios failed: {string.Join("; ", daemon.Agents())}\n{daemon.Output.Describe()}");
        Assert.False(daemon.HasExited, $"The daemon exited.\n{daemon.Output.Describe()}");
        Assert.DoesNotContain("did not stop within", daemon.Output.Text, StringComparison.Ordinal);

        // One next scenario per transport, after both of its faults. Completion without loss is the point, not
        // throughput: a few hundred milliseconds of traffic show it.
        var next = await Cases.RunAsync(daemon, transports.ToDictionary(t => t, t => Specs.Stream(t, publishers: 1, subscribers: 2, Specs.Milliseconds(300), payloadBytes: 1024)));
        foreach (var (transport, scenario) in next)
        {
            checks.Check(transport, new ScenarioExpectations(scenario, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify);
        }

        checks.Verify();
    }
}
