using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// Records into the database through <see cref="StoreWriter"/>'s queue. The store
/// itself (StoreWriter, ScenarioStore) knows nothing of scenario runs: this adapter hands it the snapshots as data.
/// </summary>
public sealed class StoreRecorder(StoreWriter writer) : IScenarioRecorder
{
    public void Changed(ScenarioRun run) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, run.Snapshot(), null));

    public void Interval(ScenarioRun run, IntervalSample interval) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, run.Snapshot(), interval));

    public void LatencyInterval(ScenarioRun run, HdrInterval interval) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, null, null, interval));

    public void SoakPoint(ScenarioRun run, SoakPoint point) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, null, null) { Soak = point });

    public string? ErrorFor(string scenarioId) => writer.ErrorFor(scenarioId);
}
