using System.Diagnostics;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Scenarios that are stopped, lose an agent, or lose their daemon; and what each leaves behind. Every scenario is
/// paced with BLOCK waits (<see cref="Specs.Paced"/>): states, stored results and what goes away hold at 2,000 msg/s as
/// they do closed loop, so the class runs in the light lane.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ScenarioLifecycleTests(LightDaemon shared, ITestOutputHelper output) : IClassFixture<LightDaemon>, IDisposable
{
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Fact]
    public async Task WithoutDuration_RunsUntilStopScenario_ThenIsStoppedWithStats()
    {
        var daemon = shared.Daemon;
        var started = await daemon.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, duration: null).Paced());
        Assert.Null(started.Spec.Duration);
        await daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));

        // A soak has no end of its own: seconds later it still runs.
        await Task.Delay(TimeSpan.FromSeconds(2));
        var running = await daemon.GetScenarioAsync(started.Id);
        Assert.True(running.State == ScenarioState.Running, $"Expected RUNNING 2 s in, got {running.State}.\n{daemon.Describe(running)}");

        var stopped = await daemon.StopScenarioAsync(started.Id);

        new ScenarioExpectations(stopped, daemon)
            .Equal(ScenarioState.Stopped, stopped.State, "state after StopScenario")
            .Equal(string.Empty, stopped.Error, "error")
            .That(stopped.EndedAt is not null, "ended_at is set")
            .That(stopped.Stats is { MessagesReceived: > 0 }, "messages_received > 0")
            .That(stopped.Stats is { MessagesLost: 0, MessagesCorrupted: 0, MessagesDuplicated: 0 }, "nothing lost, corrupted or duplicated")
            .That(stopped.Stats is { MeasuredDuration: not null } && stopped.Stats.MeasuredDuration.ToTimeSpan() >= TimeSpan.FromSeconds(2), "measured_duration >= 2 s")
            .Verify();
        Assert.Equal(stopped, await daemon.GetScenarioAsync(started.Id));
    }

    [Fact]
    public async Task StopRightAfterStart_EndsStopped_NotFailed_AndLeavesNoAgents()
    {
        var daemon = shared.Daemon;
        var started = await daemon.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 3, duration: null).Paced());
        var stopped = await daemon.StopScenarioAsync(started.Id);

        new ScenarioExpectations(stopped, daemon)
            .Equal(ScenarioState.Stopped, stopped.State, "state after a stop while starting")
            .Equal(string.Empty, stopped.Error, "error")
            .That(stopped.EndedAt is not null, "ended_at is set")
            .Verify();
        await Poll.UntilAsync(() => daemon.Agents().Count == 0, TimeSpan.FromSeconds(10),
            () => $"agents still running after the stop: {string.Join("; ", daemon.Agents())}\n{daemon.Output.Describe()}");
    }

    [Fact]
    public async Task AgentKilledMidRun_FailsTheScenarioNamingTheAgent_AndTheDaemonRunsTheNextOne()
    {
        var daemon = shared.Daemon;
        var started = await daemon.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, duration: TimeSpan.FromSeconds(60)).Paced());
        await daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
        var agents = daemon.Agents();
        Assert.True(agents.Count == 2, $"Expected the daemon to have 2 agent children, found: {string.Join("; ", agents)}.\n{daemon.Output.Describe()}");

        var victim = agents[^1];
        ProcessTree.Signal(victim.Pid, ProcessTree.SigKill);
        var failed = await daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(20));

        new ScenarioExpectations(failed, daemon)
            .Equal(ScenarioState.Failed, failed.State, "state")
            .That(failed.Error.Contains("agent", StringComparison.Ordinal), "error contains \"agent\"")
            .That(failed.Error.Contains(victim.Pid.ToString(), StringComparison.Ordinal), $"error contains the killed agent's pid {victim.Pid}")
            .That(failed.EndedAt is not null, "ended_at is set")
            .Verify();

        // The surviving agent goes with its scenario.
        await Poll.UntilAsync(() => daemon.Agents().Count == 0, TimeSpan.FromSeconds(10),
            () => $"agents still running after the scenario failed: {string.Join("; ", daemon.Agents())}\n{daemon.Output.Describe()}");

        var next = await daemon.RunScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, Specs.Milliseconds(300)).Paced());
        new ScenarioExpectations(next, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
    }

    [Fact]
    public async Task DaemonSigtermMidRun_ExitsWithin5s_LeavingNoAgentsSocketsOrPipes()
    {
        var daemon = await DaemonProcess.StartAsync();
        await using var _ = daemon;
        using var log = daemon.LogTo(output);
        var uds = await daemon.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, duration: null).Paced());
        var pipes = await daemon.StartScenarioAsync(Specs.Stream("named-pipes", publishers: 2, subscribers: 1, duration: null).Paced());
        await daemon.WaitForStateAsync(uds.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
        await daemon.WaitForStateAsync(pipes.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));

        // What must go away: check it is there first, or its absence afterwards proves nothing.
        var agents = daemon.Agents();
        Assert.True(agents.Count == 3, $"Expected 3 agent children, found: {string.Join("; ", agents)}.\n{daemon.Output.Describe()}");
        Assert.True(Directory.Exists(daemon.RuntimeDirectory), $"{daemon.RuntimeDirectory} does not exist while the daemon runs");
        Assert.NotEmpty(Directory.GetFiles(daemon.RuntimeDirectory, "*.sock"));
        Assert.NotEmpty(NamedPipeFiles(daemon));

        var clock = Stopwatch.StartNew();
        bool exited = await daemon.TerminateAsync(TimeSpan.FromSeconds(5));
        Assert.True(exited, $"The daemon was still running 5 s after SIGTERM.\n{daemon.Output.Describe()}");
        output.WriteLine($"The daemon exited {clock.ElapsedMilliseconds} ms after SIGTERM with code {daemon.ExitCode}.");

        var survivors = agents.Where(a => a.IsAlive).ToList();
        Assert.True(survivors.Count == 0, $"Agents still running after the daemon exited: {string.Join("; ", survivors)}.\n{daemon.Output.Describe()}");
        if (Directory.Exists(daemon.RuntimeDirectory))
        {
            Assert.Fail($"{daemon.RuntimeDirectory} still exists, holding: {string.Join(", ", Directory.EnumerateFileSystemEntries(daemon.RuntimeDirectory))}\n{daemon.Output.Describe()}");
        }

        Assert.Empty(NamedPipeFiles(daemon));
        Assert.Equal(0, daemon.ExitCode);
    }

    private static string[] NamedPipeFiles(DaemonProcess daemon) => Directory.GetFiles(Path.GetTempPath(), daemon.NamedPipePrefix + "*");
}
