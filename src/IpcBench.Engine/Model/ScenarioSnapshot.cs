namespace IpcBench.Daemon.Model;

/// <summary>
/// A scenario as the engine reports it at one moment: what GetScenario, ListScenarios, WatchScenario, the store and the
/// exports are made of (Schema/ScenarioProtos renders it). Optional parts are null until the scenario has them.
/// </summary>
public sealed record ScenarioSnapshot(
    string Id,
    RunSpec? Spec,
    RunState State,
    string Error,
    DateTime CreatedAt,
    DateTime? StartedAt,
    DateTime? EndedAt,
    RunStats? Stats,
    RunEnvironment? Environment,
    IntervalSample? LastInterval,
    string StorageError)
{
    public bool IsFinished => State.IsFinished();

    /// <summary>The suite that ran it; empty for a scenario started on its own.</summary>
    public string SuiteId { get; init; } = string.Empty;

    /// <summary>The scenario this one resumes (a soak carried on after a stop); empty otherwise.</summary>
    public string ResumedFrom { get; init; } = string.Empty;
}

/// <summary>A scenario with its per-tick series, oldest first: what exports carry.</summary>
public sealed record ScenarioResult(ScenarioSnapshot Scenario, IReadOnlyList<IntervalSample> Series);
