using System.Globalization;
using Google.Protobuf;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// SIGTERM is how systemd, docker and a user's Ctrl-C stop the daemon: scenarios running then must end STOPPED with
/// their results (the agents' link outlives the stopping of the scenarios), and a restarted daemon lists them the same.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class DaemonShutdownTests(ITestOutputHelper output) : IDisposable
{
    private readonly DaemonDirectory _state = new("shutdown");

    private DaemonSettings Setup => _state.Settings;

    public void Dispose() => _state.Dispose();

    /// <summary>
    /// Every transport with its own way of ending a link (sockets, rings, iceoryx2 services, gRPC streams, zeromq) at
    /// once: one shutdown stops them all, as it would a busy daemon's.
    /// </summary>
    [Fact]
    public async Task SigTerm_WhileEveryTransportRuns_EndsEachStoppedWithItsStatsAndNoLoss_AndARestartListsThemTheSame()
    {
        string[] transports = Iceoryx2Availability.SkipReason is null
            ? ["uds", "shm-ring", "iceoryx2", "grpc-uds", "zeromq"]
            : ["uds", "shm-ring", "grpc-uds", "zeromq"];
        var watched = new Dictionary<string, Scenario>();
        await using (var daemon = await DaemonProcess.StartAsync(Setup with { Configuration = [string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={transports.Length}")] }))
        {
            using var log = daemon.LogTo(output);
            var ids = new List<string>();
            foreach (var transport in transports)
            {
                // Rate-limited soaks (no duration): a SIGTERM, not their end, is what stops them.
                var started = await daemon.StartScenarioAsync(Specs.Stream(transport, 1, 2, duration: null)
                    .With(s => { s.RatePerPublisher = 5000; s.WaitStrategy = WaitStrategy.Block; }));
                ids.Add(started.Id);
            }

            foreach (var id in ids)
            {
                await daemon.WaitForAsync(id, s => s.State == ScenarioState.Running && s.LastInterval is not null, TimeSpan.FromSeconds(30), "to run a tick");
            }

            // Watching through the shutdown, as a user's grpcurl would: the last snapshot each stream sends is the result.
            // The SIGTERM goes once every stream has its first snapshot: a watch whose call had not yet reached the daemon
            // when it began to stop would be refused as any new call then is, which is not watching through the shutdown.
            using var watching = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            var first = ids.ToDictionary(id => id, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
            var watches = ids.Select(async id =>
            {
                Scenario? last = null;
                await foreach (var snapshot in daemon.WatchScenarioAsync(id, watching.Token))
                {
                    last = snapshot;
                    first[id].TrySetResult();
                }

                return last;
            }).ToList();
            // A stream that ends or fails before its first snapshot is awaited below and reports why.
            await Task.WhenAll(ids.Select((id, i) => Task.WhenAny(first[id].Task, watches[i])));

            Assert.True(await daemon.TerminateAsync(TimeSpan.FromSeconds(15)), $"the daemon did not stop on SIGTERM\n{daemon.Output.Describe()}");
            Assert.Equal(0, daemon.ExitCode);
            foreach (var watch in watches)
            {
                if (await watch is { } last)
                {
                    watched[last.Id] = last;
                }
            }

            foreach (var id in ids)
            {
                Assert.True(watched.TryGetValue(id, out var final), $"WatchScenario of {id} ended without a snapshot\n{daemon.Output.Describe()}");
                new ScenarioExpectations(final, daemon).EndedWithoutLoss(ScenarioState.Stopped, subscribersPerPublisher: 2).Verify();
                Assert.DoesNotContain("before reporting its result", daemon.Output.Text, StringComparison.Ordinal);
            }
        }

        await using var restarted = await DaemonProcess.StartAsync(Setup);
        using var restartedLog = restarted.LogTo(output);
        foreach (var (id, final) in watched)
        {
            var stored = await restarted.GetScenarioAsync(id);
            Assert.True(final.Equals(stored), $"watched: {JsonFormatter.Default.Format(final)}\nafter restart: {JsonFormatter.Default.Format(stored)}");
        }

        var listed = await restarted.ListScenariosAsync(new ListScenariosRequest { State = ScenarioState.Stopped });
        Assert.Equal(watched.Keys.Order(), listed.Scenarios.Select(s => s.Id).Order());
    }
}
