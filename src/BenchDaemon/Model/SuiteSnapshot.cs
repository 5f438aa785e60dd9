namespace IpcBench.Daemon.Model;

/// <summary>A suite's lifecycle; the numbers are control.proto's SuiteState (the mapping casts).</summary>
public enum SuiteRunState
{
    Unspecified = 0,
    Pending = 1,
    Running = 2,
    Completed = 3,
    Stopped = 4,
    Failed = 5,
}

/// <summary>One cell of a suite as it runs: the spec every repetition runs, and its scenarios in round order.</summary>
public sealed record SuiteCellRecord(RunSpec Spec, IReadOnlyList<string> ScenarioIds);

/// <summary>
/// A suite as the engine reports it at one moment. The cells' results are the scenarios' own records (looked up by
/// id), so a suite holds no figures of its own and a stored suite stays as small as its ids.
/// </summary>
/// <param name="Preset">The preset id it expanded, or empty for a matrix.</param>
/// <param name="RunningCell">0-based index of the cell running now; null when none runs.</param>
public sealed record SuiteSnapshot(
    string Id,
    string Name,
    string Preset,
    int Repetitions,
    SuiteRunState State,
    string Error,
    DateTime CreatedAt,
    DateTime? StartedAt,
    DateTime? EndedAt,
    IReadOnlyList<SuiteCellRecord> Cells,
    int ScenariosDone,
    int? RunningRound,
    int? RunningCell,
    string? RunningScenarioId)
{
    public int ScenariosTotal => Cells.Count * Repetitions;

    public bool IsFinished => State is SuiteRunState.Completed or SuiteRunState.Stopped or SuiteRunState.Failed;
}
