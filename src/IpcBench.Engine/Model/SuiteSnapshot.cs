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

/// <summary>Why a cell of an adaptive suite took no more rounds; the numbers are control.proto's RepetitionStop.</summary>
public enum CellStop
{
    /// <summary>Fixed repetitions, or the cell still takes rounds.</summary>
    Unspecified = 0,
    TargetReached = 1,
    MaxRepetitions = 2,

    /// <summary>The suite ended first (StopSuite, or it failed).</summary>
    SuiteStopped = 3,
}

/// <summary>Adaptive repetitions: rounds until a cell's median msg/s is known within ±<paramref name="PrecisionPercent"/>, or <paramref name="MaxRepetitions"/>.</summary>
public sealed record AdaptiveTarget(double PrecisionPercent, int MaxRepetitions);

/// <summary>
/// One cell of a suite as it runs: the spec every repetition runs, and its scenarios in round order (a round's last
/// attempt: a noise retry takes the place of the attempt it retried).
/// </summary>
public sealed record SuiteCellRecord(RunSpec Spec, IReadOnlyList<string> ScenarioIds)
{
    /// <summary>Attempts that FAILED on max_noise_percent, in run order; empty in suites stored before retries existed.</summary>
    public IReadOnlyList<NoisyAttemptRecord> NoisyAttempts { get; init; } = [];

    /// <summary>Adaptive suites: why the cell took no more rounds. Unspecified in suites stored before adaptive repetitions existed.</summary>
    public CellStop Stop { get; init; }

    /// <summary>Rate searches: the cell's rate-limited probes in run order; empty otherwise.</summary>
    public IReadOnlyList<RateProbeRecord> Probes { get; init; } = [];

    /// <summary>Rate searches: where the cell's search stands; null otherwise.</summary>
    public RateSearchOutcome? Search { get; init; }

    /// <summary>Noise retries taken over all rounds.</summary>
    public int Retries => NoisyAttempts.Count(a => a.Retried);
}

/// <summary>An attempt at a cell's round that failed because other processes' CPU exceeded max_noise_percent.</summary>
/// <param name="Round">1-based round it belonged to.</param>
/// <param name="Retried">Another attempt of the round followed; false: it stayed the round's result.</param>
public sealed record NoisyAttemptRecord(int Round, string ScenarioId, double NoisePercent, bool Retried);

/// <summary>
/// A suite as the engine reports it at one moment. The cells' results are the scenarios' own records (looked up by
/// id), so a suite holds no figures of its own and a stored suite stays as small as its ids.
/// </summary>
/// <param name="Preset">The preset id it expanded, or empty for a matrix.</param>
/// <param name="Repetitions">Fixed rounds; 0 in an adaptive suite (see <see cref="Adaptive"/>).</param>
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
    /// <summary>Adaptive repetitions' target and bound; null for fixed repetitions and in suites stored before they existed.</summary>
    public AdaptiveTarget? Adaptive { get; init; }

    /// <summary>The sustainable-rate search every cell ran; null for none and in suites stored before searches existed.</summary>
    public RateSearchSpec? RateSearch { get; init; }

    /// <summary>Every cell's expected scenarios, plus each noise retry taken: done reaches total when a suite completes.</summary>
    public int ScenariosTotal => Cells.Sum(c => ScenariosPerCell.Expected(Repetitions, Adaptive, RateSearch, c)) + Cells.Sum(c => c.Retries);

    public bool IsFinished => State is SuiteRunState.Completed or SuiteRunState.Stopped or SuiteRunState.Failed;
}
