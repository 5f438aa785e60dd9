using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// A suite's sustainable-rate search, the step a suite with rate_search runs instead of its rounds: cell after cell, its
/// closed-loop scenario (the cell's one round, bounding the ramp), then its rate-limited probes, each an ordinary
/// scenario of the suite judged by <see cref="RateProbeVerdict"/>. The suite runs and records the scenarios; this keeps
/// where each cell's search stands, changed only through the suite's update so its snapshots see it whole.
/// </summary>
internal sealed class SuiteRateSearch
{
    private readonly RateSearchSpec _spec;
    private readonly IReadOnlyList<ResolvedSpec> _cells;
    private readonly RateSearchSteps[] _steps;

    public SuiteRateSearch(RateSearchSpec spec, IReadOnlyList<ResolvedSpec> cells)
    {
        _spec = spec;
        _cells = cells;
        _steps = [.. cells.Select(_ => new RateSearchSteps(spec))];
    }

    /// <summary>The cell's probes in run order; read under the suite's lock.</summary>
    public IReadOnlyList<RateProbeRecord> Probes(int cell) => [.. _steps[cell].Probes];

    /// <summary>Where the cell's search stands; read under the suite's lock.</summary>
    public RateSearchOutcome Outcome(int cell) => _steps[cell].Outcome();

    /// <summary>The suite ended: searches still going end where they stand.</summary>
    public void Abandon()
    {
        foreach (var steps in _steps)
        {
            steps.Abandon();
        }
    }

    /// <param name="runRound">Runs the cell's closed-loop round, as any round of the suite.</param>
    /// <param name="runProbe">Runs the cell at an offered rate: a scenario of the suite, but none of its rounds.</param>
    /// <param name="update">Makes a change under the suite's lock and tells its watchers.</param>
    /// <param name="stopped">The suite was asked to stop: no further probe or cell.</param>
    public async Task RunAsync(
        Func<int, Task<ScenarioRun>> runRound, Func<int, ResolvedSpec, Task<ScenarioRun>> runProbe, Action<Action> update, Func<bool> stopped)
    {
        for (int cell = 0; cell < _cells.Count && !stopped(); cell++)
        {
            var spec = _cells[cell];
            var steps = _steps[cell];
            var closedLoop = (await runRound(cell).ConfigureAwait(false)).Snapshot();
            double? perPublisher = closedLoop is { State: RunState.Completed, Stats: { } stats }
                ? stats.MessagesPerSecond / spec.FanOut : null;
            double? rate = null;
            update(() =>
            {
                steps.ClosedLoop(perPublisher, closedLoop.Error.Length > 0 ? closedLoop.Error : closedLoop.State.ToString().ToUpperInvariant());
                rate = steps.Next();
            });
            while (rate is { } offered && !stopped())
            {
                var probeSpec = ProbeSpec(spec, offered, _spec);
                var probe = (await runProbe(cell, probeSpec).ConfigureAwait(false)).Snapshot();
                var reason = RateProbeVerdict.Judge(_spec, probeSpec, probe);
                update(() =>
                {
                    steps.Record(new RateProbeRecord(offered, probe.Id, reason.Length == 0, reason));
                    rate = steps.Next();
                });
            }
        }
    }

    /// <summary>The cell at an offered rate: latency sampled as a rate-limited run samples it (every message, unless asked otherwise).</summary>
    internal static ResolvedSpec ProbeSpec(ResolvedSpec cell, double rate, RateSearchSpec search) => cell with
    {
        RatePerPublisher = rate,
        LatencySampleEvery = Workload.LatencySampling.Resolve(search.LatencySampleEvery, cell.RoundTrip, rate),
    };
}
