using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Admission control against a real daemon: concurrent scenarios, agent processes and shared memory. Refusals are
/// RESOURCE_EXHAUSTED with the numbers and the option behind the limit; what was admitted runs normally.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class AdmissionTests(ITestOutputHelper output)
{
    [Fact]
    public async Task FiftyConcurrentStarts_AdmitExactlyTheConcurrencyLimit_AndRefuseTheRestAsResourceExhausted()
    {
        await using var daemon = await DaemonProcess.StartAsync("--IpcBench:MaxConcurrentScenarios=4");
        using var log = daemon.LogTo(output);
        var spec = Specs.Stream("uds", publishers: 1, subscribers: 1, duration: null);

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
        var listed = await daemon.ListScenariosAsync();
        Assert.Equal(admitted.Select(s => s.Id).Order(), listed.Select(s => s.Id).Order());

        foreach (var scenario in admitted)
        {
            var stopped = await daemon.StopScenarioAsync(scenario.Id);
            new ScenarioExpectations(stopped, daemon)
                .Equal(ScenarioState.Stopped, stopped.State, "state after StopScenario")
                .That(stopped.Stats is { MessagesLost: 0, MessagesCorrupted: 0, MessagesDuplicated: 0 }, "nothing lost, corrupted or duplicated")
                .Verify();
        }

        // Slots free again once scenarios end.
        var next = await daemon.RunScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 1, Specs.Seconds(1)));
        new ScenarioExpectations(next, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
    }

    [Fact]
    public async Task AgentLimit_RefusesAScenarioWhoseAgentsWouldExceedIt_NamingTheNumbers()
    {
        await using var daemon = await DaemonProcess.StartAsync("--IpcBench:MaxAgents=3");
        using var log = daemon.LogTo(output);
        var first = await daemon.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, duration: null));

        var e = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(Specs.Stream("tcp", publishers: 1, subscribers: 2, duration: null)));
        Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
        Assert.Equal("this scenario needs 2 agent processes and running scenarios hold 2; at most 3 may run at once (IpcBench:MaxAgents)", e.Status.Detail);

        // In-process scenarios start no agents and still fit.
        var inProcess = await daemon.RunScenarioAsync(Specs.Stream("channels", publishers: 1, subscribers: 2, Specs.Milliseconds(300)));
        Assert.Equal(ScenarioState.Completed, inProcess.State);

        await daemon.StopScenarioAsync(first.Id);
        var next = await daemon.RunScenarioAsync(Specs.Stream("tcp", publishers: 1, subscribers: 2, Specs.Seconds(1)));
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
        const long budget = 3L << 20;
        await using var daemon = await DaemonProcess.StartAsync(string.Create(CultureInfo.InvariantCulture, $"--IpcBench:SharedMemoryBudgetBytes={budget}"));
        using var log = daemon.LogTo(output);
        var spec = Specs.Stream(transport, publishers: 1, subscribers: 1, duration: null, payloadBytes: payloadBytes);

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
        var again = await daemon.RunScenarioAsync(Specs.Stream(transport, publishers: 1, subscribers: 1, Specs.Milliseconds(500), payloadBytes: payloadBytes));
        new ScenarioExpectations(again, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
        var uds = await daemon.RunScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 1, Specs.Milliseconds(300)));
        Assert.Equal(ScenarioState.Completed, uds.State);
    }

    [Iceoryx2Fact]
    public async Task SharedMemoryBeyondWhatDevShmHasFree_IsRefusedBeforeAnythingStarts()
    {
        await using var daemon = await DaemonProcess.StartAsync();
        using var log = daemon.LogTo(output);
        // 64 publishers, each with a segment for 64 subscribers' queues of 64 MiB messages: hundreds of GiB.
        var huge = Specs.Stream("iceoryx2", publishers: 64, subscribers: 64, duration: null, payloadBytes: 64 * 1024 * 1024);

        var e = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(huge));
        output.WriteLine(e.Status.Detail);

        Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
        Assert.Matches(@"^this scenario needs \d+\.\d MiB \(\d+ B\) of shared memory but /dev/shm has \d+\.\d MiB \(\d+ B\) free; ", e.Status.Detail);
        Assert.Empty(await daemon.ListScenariosAsync());
        Assert.Empty(daemon.Agents());
    }
}
