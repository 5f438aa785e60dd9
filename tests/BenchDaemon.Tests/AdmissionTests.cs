using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Admission control against a real daemon: concurrent scenarios, agent processes and shared memory. Refusals are
/// RESOURCE_EXHAUSTED with the numbers and the option behind the limit; what was admitted runs normally, agents and all.
/// One daemon with all three limits serves the class: the concurrency limit is checked before the agent limit, and that
/// before the budget, so each test meets only the limit it is about. Each starts with nothing running and stops what it
/// started. Beyond /dev/shm's free space needs no budget and no agents: it runs on an in-process host. Every scenario
/// is paced (<see cref="Specs.Paced"/>): admission is the point, and the shared-memory claims do not depend on the wait.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class AdmissionTests(AdmissionTests.LimitedDaemon limited, ITestOutputHelper output) : IClassFixture<AdmissionTests.LimitedDaemon>, IDisposable
{
    private const int MaxConcurrentScenarios = 4;

    /// <summary>As many agents as the concurrency limit's 1:1 scenarios hold, so those meet the concurrency limit.</summary>
    private const int MaxAgents = 4;

    private const long Budget = 3L << 20;

    private readonly DaemonProcess _daemon = limited.Daemon;

    private readonly IDisposable _log = limited.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    /// <summary>
    /// A scenario that holds a slot until stopped. Paced and blocking: admission is the point, not throughput, and four
    /// closed-loop uds scenarios spinning on two CPUs made every poll of these tests slow (11 s for one of them).
    /// </summary>
    private static ScenarioSpec Holding(string transport = "uds", int subscribers = 1, int payloadBytes = 64) =>
        Specs.Stream(transport, publishers: 1, subscribers: subscribers, duration: null, payloadBytes: payloadBytes)
            .Paced(1000);

    [Fact]
    public async Task FiftyConcurrentStarts_AdmitExactlyTheConcurrencyLimit_AndRefuseTheRestAsResourceExhausted()
    {
        var daemon = _daemon;
        var before = await NothingRunningAsync();
        var spec = Holding();

        var calls = Enumerable.Range(0, 50).Select(async _ =>
        {
            try
            {
                return (Scenario: await daemon.StartScenarioAsync(spec), Error: (RpcException?)null);
            }
            catch (RpcException e)
            {
                return (Scenario: (Scenario?)null, Error: e);
            }
        }).ToList();
        var answers = await Task.WhenAll(calls);

        var admitted = answers.Where(a => a.Scenario is not null).Select(a => a.Scenario!).ToList();
        var refused = answers.Where(a => a.Error is not null).Select(a => a.Error!).ToList();
        Assert.True(admitted.Count == 4, $"Expected exactly 4 of 50 starts admitted, got {admitted.Count}; refusals: {string.Join(" | ", refused.Take(3).Select(e => e.Message))}");
        Assert.All(refused, e =>
        {
            Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
            Assert.Contains("at most 4 may run at once (IpcBench:MaxConcurrentScenarios)", e.Status.Detail, StringComparison.Ordinal);
        });
        Assert.Equal(4, admitted.Select(s => s.Id).Distinct().Count());

        foreach (var scenario in admitted)
        {
            await daemon.WaitForStateAsync(scenario.Id, ScenarioState.Running, TimeSpan.FromSeconds(60));
        }

        Assert.Equal(4, daemon.Agents().Count);
        // The refused starts left no scenario behind: the daemon has the admitted ones and those of earlier tests.
        var listed = (await daemon.ListScenariosAsync()).Select(s => s.Id).Except(before);
        Assert.Equal(admitted.Select(s => s.Id).Order(), listed.Order());

        foreach (var scenario in admitted)
        {
            var stopped = await daemon.StopScenarioAsync(scenario.Id);
            new ScenarioExpectations(stopped, daemon)
                .Equal(ScenarioState.Stopped, stopped.State, "state after StopScenario")
                .That(stopped.Stats is { MessagesLost: 0, MessagesCorrupted: 0, MessagesDuplicated: 0 }, "nothing lost, corrupted or duplicated")
                .Verify();
        }

        // Slots free again once scenarios end.
        var next = await daemon.RunScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 1, Specs.Milliseconds(300)).Paced());
        new ScenarioExpectations(next, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
    }

    /// <summary>
    /// A client that starts the next scenario the moment it reads the last one's final state, at the limit, is admitted:
    /// the final state is shown only once the scenario has released its agents (it used to be shown a moment before, and
    /// such a start was refused RESOURCE_EXHAUSTED). From RUNNING on (its 200 ms, STOPPING, the final state) the state is
    /// polled as fast as the daemon answers, so a final state shown before the release would be seen inside that window;
    /// before it, while the agents start, every 20 ms. Polled back to back throughout, this test took 45 s beside the
    /// other lane (9 s alone): the polls kept a core busy while the agents they waited for were starting.
    /// </summary>
    [Fact]
    public async Task AStartMadeOnReadingTheFinalState_IsAdmitted_AtTheLimit()
    {
        var daemon = _daemon;
        await NothingRunningAsync();
        var holders = new List<Scenario>();
        for (int i = 0; i < MaxConcurrentScenarios - 1; i++)
        {
            holders.Add(await daemon.StartScenarioAsync(Holding()));
        }

        var shortRun = Specs.Stream("uds", publishers: 1, subscribers: 1, Specs.Milliseconds(200)).Paced();
        var current = await daemon.StartScenarioAsync(shortRun);
        try
        {
            for (int i = 0; i < 5; i++)
            {
                var clock = System.Diagnostics.Stopwatch.StartNew();
                Scenario seen;
                do
                {
                    seen = await daemon.GetScenarioAsync(current.Id);
                    Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"{current.Id} did not finish: {daemon.Describe(seen)}");
                    if (seen.State < ScenarioState.Running)
                    {
                        await Task.Delay(20);
                    }
                }
                while (!ScenarioStates.IsFinished(seen));

                Assert.Equal(ScenarioState.Completed, seen.State);
                try
                {
                    current = await daemon.StartScenarioAsync(shortRun);
                }
                catch (RpcException e)
                {
                    Assert.Fail($"start {i + 1}, made on reading {seen.Id} {seen.State}, was refused: {e.StatusCode} {e.Status.Detail}");
                }
            }
        }
        finally
        {
            foreach (var scenario in holders.Append(current))
            {
                await daemon.StopScenarioAsync(scenario.Id);
            }
        }
    }

    [Fact]
    public async Task AgentLimit_RefusesAScenarioWhoseAgentsWouldExceedIt_NamingTheNumbers()
    {
        var daemon = _daemon;
        await NothingRunningAsync();
        var first = await daemon.StartScenarioAsync(Holding(subscribers: 3));

        var e = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(Specs.Stream("tcp", publishers: 1, subscribers: 2, duration: null).Paced()));
        Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
        Assert.Equal($"this scenario needs 2 agent processes and running scenarios hold 3; at most {MaxAgents} may run at once (IpcBench:MaxAgents)", e.Status.Detail);

        // In-process scenarios start no agents and still fit.
        var inProcess = await daemon.RunScenarioAsync(Specs.Stream("channels", publishers: 1, subscribers: 2, Specs.Milliseconds(300)).Paced());
        Assert.Equal(ScenarioState.Completed, inProcess.State);

        await daemon.StopScenarioAsync(first.Id);
        var next = await daemon.RunScenarioAsync(Specs.Stream("tcp", publishers: 1, subscribers: 2, Specs.Milliseconds(300)).Paced());
        new ScenarioExpectations(next, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
    }

    [Fact]
    public Task SharedMemoryBudget_RefusesAShmRingScenarioThatWouldExceedIt_NamingTheNumbers() =>
        RefusedBeyondBudgetAsync("shm-ring", payloadBytes: 1024, fitting: 1); // a ~2.1 MiB ring

    [Iceoryx2Fact]
    public Task SharedMemoryBudget_RefusesAnIceoryx2ScenarioThatWouldExceedIt_NamingTheNumbers() =>
        RefusedBeyondBudgetAsync("iceoryx2", payloadBytes: 4096, fitting: 2); // a ~1.1 MiB segment: 257-message queue + 2 loans

    private async Task RefusedBeyondBudgetAsync(string transport, int payloadBytes, int fitting)
    {
        var daemon = _daemon;
        await NothingRunningAsync();
        var spec = Specs.Stream(transport, publishers: 1, subscribers: 1, duration: null, payloadBytes: payloadBytes).Paced();

        for (int i = 0; i < fitting; i++)
        {
            await daemon.StartScenarioAsync(spec);
        }

        var refused = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(spec));
        output.WriteLine(refused.Status.Detail);
        Assert.Equal(StatusCode.ResourceExhausted, refused.StatusCode);
        Assert.Matches(@"^this scenario needs \d+\.\d MiB \(\d+ B\) of shared memory and running scenarios hold \d+\.\d MiB \(\d+ B\); " +
            @"the budget is 3\.0 MiB \(3145728 B\) \(IpcBench:SharedMemoryBudgetBytes\)$", refused.Status.Detail);

        foreach (var scenario in await daemon.ListScenariosAsync())
        {
            await daemon.StopScenarioAsync(scenario.Id);
        }

        // Freed again once they end; transports without shared memory never count against it.
        var again = await daemon.RunScenarioAsync(Specs.Stream(transport, publishers: 1, subscribers: 1, Specs.Milliseconds(300), payloadBytes: payloadBytes).Paced());
        new ScenarioExpectations(again, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
        var uds = await daemon.RunScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 1, Specs.Milliseconds(300)).Paced());
        Assert.Equal(ScenarioState.Completed, uds.State);
    }

    /// <summary>With no budget (the default) /dev/shm's free space is the limit; a host of its own, the class's has a budget.</summary>
    [Iceoryx2Fact]
    public async Task SharedMemoryBeyondWhatDevShmHasFree_IsRefusedBeforeAnythingStarts()
    {
        await using var daemon = await InProcessDaemon.StartAsync();
        using var log = daemon.LogTo(output);
        // 64 publishers, each with a segment for 64 subscribers' queues of 64 MiB messages: hundreds of GiB.
        var huge = Specs.Stream("iceoryx2", publishers: 64, subscribers: 64, duration: null, payloadBytes: 64 * 1024 * 1024).Paced();

        var e = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(huge));
        output.WriteLine(e.Status.Detail);

        Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
        Assert.Matches(@"^this scenario needs \d+\.\d MiB \(\d+ B\) of shared memory but /dev/shm has \d+\.\d MiB \(\d+ B\) free; ", e.Status.Detail);
        Assert.Empty(await daemon.ListScenariosAsync());
        Assert.Empty(daemon.Agents());
    }

    /// <summary>Waits until no scenario of the class's daemon runs and no agent is left (they exit just after their result); returns the ids it has.</summary>
    private async Task<IReadOnlyList<string>> NothingRunningAsync()
    {
        await Poll.UntilAsync(() => _daemon.Agents().Count == 0, TimeSpan.FromSeconds(15),
            () => $"agents left by an earlier test: {string.Join("; ", _daemon.Agents())}\n{_daemon.Output.Describe()}");
        var scenarios = await _daemon.ListScenariosAsync();
        Assert.All(scenarios, s => Assert.True(ScenarioStates.IsFinished(s), $"{s.Id} is still {s.State}"));
        return [.. scenarios.Select(s => s.Id)];
    }

    /// <summary>The class's daemon, with every limit these tests meet.</summary>
    public sealed class LimitedDaemon : IAsyncLifetime
    {
        private DaemonProcess? _daemon;

        internal DaemonProcess Daemon => _daemon ?? throw new InvalidOperationException("The daemon is not running.");

        public async Task InitializeAsync() => _daemon = await DaemonProcess.StartAsync(
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={MaxConcurrentScenarios}"),
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxAgents={MaxAgents}"),
            string.Create(CultureInfo.InvariantCulture, $"--IpcBench:SharedMemoryBudgetBytes={Budget}"));

        public async Task DisposeAsync()
        {
            if (_daemon is not null)
            {
                await _daemon.DisposeAsync();
            }
        }
    }
}
