using System.Runtime.CompilerServices;
using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Transports;
using IpcBench.Transports.Channels;
using IpcBench.V1;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A daemon runs for weeks and keeps up to MaxRetainedScenarios finished scenarios: each must cost its final record,
/// not its run (publishers, subscribers, histograms, buffers). Checked on the engine itself, in this process, with
/// an in-process transport: once finished, the run must be collectable while Get and List still answer.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class FinishedScenarioMemoryTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-memory-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task AFinishedScenario_KeepsItsRecord_AndLetsGoOfItsRun()
    {
        var options = Options.Create(new DaemonOptions { RuntimeDirectory = _directory });
        var transports = new TransportRegistry([new ChannelsTransport()]);
        using var runtime = new RuntimeDirectory(options, transports, NullLogger<RuntimeDirectory>.Instance);
        var manager = new ScenarioManager(
            options, runtime, new AgentLauncher(options, runtime, new Microsoft.Extensions.Configuration.ConfigurationBuilder().Build(), NullLogger<AgentLauncher>.Instance), new AgentDirectory(),
            new AgentPool(options, NullLogger<AgentPool>.Instance), new AdmissionControl(options, runtime), new NoRecorder(), NullLoggerFactory.Instance);
        var validator = new SpecValidator(transports, options);

        var (id, run) = await RunToTheEndAsync(manager, validator);

        for (int i = 0; i < 50 && run.IsAlive; i++)
        {
            // A timer of the last tick may hold the run for up to a second after it ended: collect until it lets go.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            await Task.Delay(100);
        }

        Assert.False(run.IsAlive, "the finished scenario's run (workers, histograms, buffers) is still reachable");
        var held = manager.Find(id)!;
        Assert.Null(held.Live);
        var record = ScenarioProtos.ToProto(held.Snapshot(_ => null));
        Assert.Equal(ScenarioState.Completed, record.State);
        Assert.True(record.Stats.MessagesReceived > 0);
        Assert.Equal(record.Stats.MessagesReceived, ScenarioProtos.ToProto(manager.List().Single().Snapshot(_ => null)).Stats.MessagesReceived);
        Assert.Equal(ScenarioState.Completed, ScenarioProtos.ToProto(held.ReadMetrics().State));
    }

    /// <summary>Not inlined, so that no local of this frame keeps the run alive.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<(string Id, WeakReference Run)> RunToTheEndAsync(ScenarioManager manager, SpecValidator validator)
    {
        var run = manager.Start(validator.Resolve(Specs.Stream("channels", publishers: 1, subscribers: 2, Specs.Milliseconds(300))));
        await run.Completion.WaitAsync(TimeSpan.FromSeconds(30));
        var held = manager.Find(run.Id)!;
        for (int i = 0; i < 300 && held.Live is not null; i++)
        {
            // The manager lets go of the run just after its Completion.
            await Task.Delay(10);
        }

        Assert.Null(held.Live);
        return (run.Id, new WeakReference(run));
    }

    private sealed class NoRecorder : IScenarioRecorder
    {
        public void Changed(ScenarioRun run)
        {
        }

        public void Interval(ScenarioRun run, IntervalSample interval)
        {
        }

        public void LatencyInterval(ScenarioRun run, HdrInterval interval)
        {
        }

        public void SoakPoint(ScenarioRun run, SoakPoint point)
        {
        }

        public string? ErrorFor(string scenarioId) => null;
    }
}
