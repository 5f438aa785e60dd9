using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// One scenario the daemon holds in memory: its run while it runs; once finished, only what answering Get, List and
/// /metrics needs (its final record and final metrics), so that the run, with its workers, histograms, buffers and
/// agent sessions, can be collected.
/// </summary>
public sealed class ScenarioEntry
{
    private ScenarioRun? _run;
    private Finished? _finished;

    public ScenarioEntry(ScenarioRun run)
    {
        _run = run;
        Id = run.Id;
        Claim = run.Claim;
        SuiteId = run.SuiteId;
    }

    public string Id { get; }

    /// <summary>The suite whose cell this is; empty for a scenario started on its own.</summary>
    public string SuiteId { get; }

    /// <summary>What admission control counted for this scenario; it counts only while <see cref="HoldsResources"/>.</summary>
    public AdmissionControl.Claim Claim { get; }

    /// <summary>The run, until it has finished and released everything it held; null afterwards.</summary>
    public ScenarioRun? Live => Volatile.Read(ref _run);

    /// <summary>Whether the run still holds agents, shared memory or sockets (it shows a final state only once it does not).</summary>
    public bool HoldsResources => Live is { } run && !run.Released;

    /// <summary>Whether the run has finished and released everything it held (its Completion).</summary>
    public bool IsCompleted => Live is not { } run || run.Completion.IsCompleted;

    /// <summary>The scenario as of now; once finished, a copy of its final record.</summary>
    public ScenarioSnapshot Snapshot(Func<string, string?> storageError)
    {
        if (Live is { } run)
        {
            return run.Snapshot();
        }

        var final = Volatile.Read(ref _finished)!.Scenario;
        // A write of the final record may fail after the run has gone: the store's word is the latest.
        return storageError(Id) is { } error ? final with { StorageError = error } : final;
    }

    public ScenarioMetricsSnapshot ReadMetrics() => Live is { } run ? run.ReadMetrics() : Volatile.Read(ref _finished)!.Metrics;

    /// <summary>Keeps the finished run's final record and metrics and lets go of the run.</summary>
    internal void Retire()
    {
        var run = Live!;
        Volatile.Write(ref _finished, new Finished(run.Snapshot(), run.ReadMetrics()));
        Volatile.Write(ref _run, null);
    }

    private sealed record Finished(ScenarioSnapshot Scenario, ScenarioMetricsSnapshot Metrics);
}
