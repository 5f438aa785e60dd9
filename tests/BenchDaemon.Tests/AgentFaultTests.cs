using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// An agent killed (SIGKILL) or frozen (SIGSTOP, caught by the heartbeat timeout) in the middle of a run, on every
/// cross-process transport: the scenario fails naming the agent, its publishers do not hang, nothing of it stays
/// alive, and the next scenario on the same daemon succeeds.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class AgentFaultTests(ITestOutputHelper output)
{
    private const int HeartbeatTimeoutSeconds = 2;

    public static TheoryData<string, int> Faults()
    {
        var data = new TheoryData<string, int>();
        foreach (var transport in RegisteredTransports.CrossProcessIds)
        {
            data.Add(transport, ProcessTree.SigKill);
            data.Add(transport, ProcessTree.SigStop);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Faults))]
    public async Task AgentKilledOrStoppedMidRun_FailsTheScenario_AndTheNextOneSucceeds(string transport, int signal)
    {
        await using var daemon = await DaemonProcess.StartAsync(
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:HeartbeatTimeoutSeconds={HeartbeatTimeoutSeconds}"));
        using var log = daemon.LogTo(output);
        // Closed loop: the publisher is most likely blocked on the victim's full queue when it goes, the case that hangs.
        var started = await daemon.StartScenarioAsync(Specs.Stream(transport, publishers: 1, subscribers: 2, duration: TimeSpan.FromSeconds(60), payloadBytes: 1024));
        await daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
        var agents = daemon.Agents();
        Assert.True(agents.Count == 2, $"Expected 2 agent children, found: {string.Join("; ", agents)}.\n{daemon.Output.Describe()}");

        var victim = agents[^1];
        var clock = Stopwatch.StartNew();
        ProcessTree.Signal(victim.Pid, signal);
        var failed = await daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(HeartbeatTimeoutSeconds + 20));
        output.WriteLine($"{transport}: FAILED {clock.ElapsedMilliseconds} ms after signal {signal}: {failed.Error}");

        var expect = new ScenarioExpectations(failed, daemon)
            .Equal(ScenarioState.Failed, failed.State, "state")
            .That(failed.Error.Contains(victim.Pid.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal), $"error names the victim's pid {victim.Pid}")
            .That(failed.EndedAt is not null, "ended_at is set");
        if (signal == ProcessTree.SigStop)
        {
            expect.That(failed.Error.Contains("sent no report", StringComparison.Ordinal), "error says the agent stopped reporting (heartbeat)");
        }
        else
        {
            expect.That(failed.Error.Contains("SIGKILL", StringComparison.Ordinal), "error says the agent was killed by SIGKILL");
        }

        expect.Verify();

        // The stopped agent too: a frozen process must be killed, not left behind holding its sockets and mappings.
        await Poll.UntilAsync(() => daemon.Agents().Count == 0, TimeSpan.FromSeconds(10),
            () => $"agents still running after the scenario failed: {string.Join("; ", daemon.Agents())}\n{daemon.Output.Describe()}");
        Assert.False(daemon.HasExited, $"The daemon exited.\n{daemon.Output.Describe()}");
        Assert.DoesNotContain("did not stop within", daemon.Output.Text, StringComparison.Ordinal);

        var next = await daemon.RunScenarioAsync(Specs.Stream(transport, publishers: 1, subscribers: 2, Specs.Seconds(1), payloadBytes: 1024));
        new ScenarioExpectations(next, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
    }
}
