using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;

namespace IpcBench.Daemon.Scenarios;

/// <summary>What a scenario tells the store: every state change and every tick's interval.</summary>
public interface IScenarioRecorder
{
    void Changed(ScenarioRun run);

    void Interval(ScenarioRun run, IntervalSample interval);

    /// <summary>An interval's latency histogram, for the .hlog export; the last one of a run may be shorter than a tick.</summary>
    void LatencyInterval(ScenarioRun run, HdrInterval interval);

    /// <summary>A soak point as the judge closed it (every IpcBench:SoakPointSeconds of measured time), for the soak's page.</summary>
    void SoakPoint(ScenarioRun run, SoakPoint point);

    string? ErrorFor(string scenarioId);
}

/// <summary>
/// Records into the database through <see cref="StoreWriter"/>'s queue. It lives here, not in Persistence, so that the
/// store knows nothing of scenario runs: it is handed the snapshots as data.
/// </summary>
public sealed class StoreRecorder(StoreWriter writer) : IScenarioRecorder
{
    public void Changed(ScenarioRun run) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, run.Snapshot(), null));

    public void Interval(ScenarioRun run, IntervalSample interval) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, run.Snapshot(), interval));

    public void LatencyInterval(ScenarioRun run, HdrInterval interval) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, null, null, interval));

    public void SoakPoint(ScenarioRun run, SoakPoint point) => writer.Enqueue(run.Id, () => new StoreWrite(run.Id, null, null) { Soak = point });

    public string? ErrorFor(string scenarioId) => writer.ErrorFor(scenarioId);
}
