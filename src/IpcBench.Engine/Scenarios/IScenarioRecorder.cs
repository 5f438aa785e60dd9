using IpcBench.Daemon.Model;

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
