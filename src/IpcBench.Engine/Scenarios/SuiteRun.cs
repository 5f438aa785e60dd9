using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Reports;

namespace IpcBench.Daemon.Scenarios;

/// <summary>What a suite runs: its cells (validated specs) and how many interleaved rounds.</summary>
/// <param name="Preset">The preset id it expanded, or empty for a matrix.</param>
/// <param name="Repetitions">Fixed rounds; 0 with <see cref="Adaptive"/>.</param>
public sealed record SuitePlan(string Name, string Preset, int Repetitions, IReadOnlyList<ResolvedSpec> Cells)
{
    /// <summary>Adaptive repetitions (<see cref="AdaptiveRounds"/>); null for fixed ones.</summary>
    public AdaptiveTarget? Adaptive { get; init; }

    /// <summary>A sustainable-rate search per cell (<see cref="SuiteRateSearch"/>); null for none. Its cells run closed loop, once.</summary>
    public RateSearchSpec? Search { get; init; }

    /// <summary>The most scenarios it runs, noise retries aside: every cell's fixed rounds, adaptive bound or search probes.</summary>
    public int MaxScenarios => Cells.Count * ScenariosPerCell.Most(Repetitions, Adaptive, Search);
}

/// <summary>
/// One suite: waits for its admission slot, then runs its cells one scenario at a time in RoundPlanner's order (round 1
/// runs every cell once, then round 2, ...), so a drift of the machine spreads over all cells instead of one cell's
/// repetitions. With adaptive repetitions, the rounds go on for the cells <see cref="AdaptiveRounds"/> has not stopped.
/// Its scenarios are ordinary scenarios carrying its id. A scenario that FAILED on max_noise_percent is run again at
/// once, at most <see cref="MaxNoiseRetries"/> times per round.
/// </summary>
public sealed class SuiteRun
{
    /// <summary>Retries of one round of one cell whose scenario was too noisy.</summary>
    public const int MaxNoiseRetries = 2;

    private static readonly TimeSpan SlotRetry = TimeSpan.FromMilliseconds(250);

    private readonly object _gate = new();
    private readonly TaskCompletionSource _stopRequested = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<string>[] _scenarioIds;
    private readonly List<NoisyAttemptRecord>[] _noisyAttempts;
    private readonly RunSpec[] _cellSpecs;
    private readonly List<double>[] _succeededRates;
    private readonly AdaptiveRounds? _adaptive;
    private readonly SuiteRateSearch? _search;
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private SuiteRunState _state = SuiteRunState.Pending;
    private string _error = string.Empty;
    private DateTime? _startedAt;
    private DateTime? _endedAt;
    private int _done;
    private PlannedRun? _current;
    private ScenarioRun? _running;

    private readonly Action<SuiteRun> _changedCallback;

    /// <param name="changed">Called after every change (the store writes the suite's row).</param>
    public SuiteRun(string id, SuitePlan plan, Action<SuiteRun> changed)
    {
        _changedCallback = changed;
        Id = id;
        Plan = plan;
        CreatedAt = DateTime.UtcNow;
        _scenarioIds = [.. plan.Cells.Select(_ => new List<string>())];
        _noisyAttempts = [.. plan.Cells.Select(_ => new List<NoisyAttemptRecord>())];
        _cellSpecs = [.. plan.Cells.Select(c => c.ToRunSpec())];
        _succeededRates = [.. plan.Cells.Select(_ => new List<double>())];
        _adaptive = plan.Adaptive is { } target ? new AdaptiveRounds(plan.Cells.Count, target) : null;
        _search = plan.Search is { } search ? new SuiteRateSearch(search, plan.Cells) : null;
    }

    public string Id { get; }

    public SuitePlan Plan { get; }

    public DateTime CreatedAt { get; }

    /// <summary>Completes once the suite has finished and released its admission slot.</summary>
    public Task Completion => _completed.Task;

    /// <summary>The scenario running now, if any: WatchSuite reads its live rate.</summary>
    public ScenarioRun? Running
    {
        get
        {
            lock (_gate)
            {
                return _running;
            }
        }
    }

    /// <summary>Completes at the next change of state, cell or finished scenario (WatchSuite sends a snapshot then).</summary>
    public Task Changed
    {
        get
        {
            lock (_gate)
            {
                return _changed.Task;
            }
        }
    }

    /// <summary>Stops the running cell's scenario; the suite ends STOPPED with the cells finished so far.</summary>
    public void RequestStop() => _stopRequested.TrySetResult();

    /// <param name="cellDone">Called after each finished scenario (the /metrics counter).</param>
    public async Task RunAsync(ScenarioManager scenarios, Action cellDone)
    {
        bool reserved = false;
        var outcome = (State: SuiteRunState.Stopped, Error: string.Empty);
        try
        {
            reserved = await ReserveAsync(scenarios).ConfigureAwait(false);
            if (!reserved)
            {
                return;
            }

            Update(() =>
            {
                _state = SuiteRunState.Running;
                _startedAt = DateTime.UtcNow;
            });
            if (_search is not null)
            {
                await _search.RunAsync(
                    cell => RunRoundAsync(scenarios, new PlannedRun(1, cell), cellDone),
                    (cell, probe) => RunProbeAsync(scenarios, cell, probe, cellDone),
                    Update,
                    () => _stopRequested.Task.IsCompleted).ConfigureAwait(false);
            }
            else if (_adaptive is null)
            {
                foreach (var step in RoundPlanner.Plan(Plan.Cells.Count, Plan.Repetitions))
                {
                    if (_stopRequested.Task.IsCompleted)
                    {
                        break;
                    }

                    await RunRoundAsync(scenarios, step, cellDone).ConfigureAwait(false);
                }
            }
            else
            {
                await RunAdaptiveAsync(scenarios, _adaptive, cellDone).ConfigureAwait(false);
            }

            outcome = (_stopRequested.Task.IsCompleted ? SuiteRunState.Stopped : SuiteRunState.Completed, string.Empty);
        }
        catch (Exception e)
        {
            // A cell the daemon refused to start (shutting down, agents gone): the suite ends with the cells it has.
            outcome = (SuiteRunState.Failed, e is RequestRefusedException ? e.Message : $"{e.GetType().Name}: {e.Message}");
        }
        finally
        {
            // The slot first: a client that starts something the moment it reads the final state must find it free.
            if (reserved)
            {
                scenarios.ReleaseSuiteSlot(Id);
            }

            Finish(outcome.State, outcome.Error);
            _completed.TrySetResult();
        }
    }

    public SuiteSnapshot Snapshot()
    {
        lock (_gate)
        {
            var cells = _cellSpecs.Select((spec, i) => new SuiteCellRecord(spec, [.. _scenarioIds[i]])
            {
                NoisyAttempts = [.. _noisyAttempts[i]],
                Stop = _adaptive?.Stop(i) ?? CellStop.Unspecified,
                Probes = _search?.Probes(i) ?? [],
                Search = _search?.Outcome(i),
            }).ToList();
            return new SuiteSnapshot(Id, Plan.Name, Plan.Preset, Plan.Repetitions, _state, _error, CreatedAt, _startedAt, _endedAt, cells, _done,
                _current?.Round, _current?.Cell, _running?.Id) { Adaptive = Plan.Adaptive, RateSearch = Plan.Search };
        }
    }

    /// <summary>Rounds of the cells not yet stopped, each round's cells in cell order, deciding after every round which stop.</summary>
    private async Task RunAdaptiveAsync(ScenarioManager scenarios, AdaptiveRounds rounds, Action cellDone)
    {
        IReadOnlyList<int> cells;
        lock (_gate)
        {
            cells = rounds.NextRound();
        }

        while (cells.Count > 0)
        {
            foreach (var cell in cells)
            {
                if (_stopRequested.Task.IsCompleted)
                {
                    return;
                }

                await RunRoundAsync(scenarios, new PlannedRun(rounds.Round, cell), cellDone).ConfigureAwait(false);
            }

            // A stop during the round's last scenario leaves that round short: no cell is judged on it.
            if (_stopRequested.Task.IsCompleted)
            {
                return;
            }

            Update(() =>
            {
                rounds.EndRound(cell => _succeededRates[cell]);
                cells = rounds.NextRound();
            });
        }
    }

    /// <summary>One round of one cell: its scenario id stands for the round, and its msg/s counts towards the cell's median.</summary>
    /// <returns>The round's last attempt.</returns>
    private Task<ScenarioRun> RunRoundAsync(ScenarioManager scenarios, PlannedRun step, Action cellDone) =>
        RunAttemptsAsync(scenarios, Plan.Cells[step.Cell], step, cellDone,
            started: (attempt, run) =>
            {
                var ids = _scenarioIds[step.Cell];
                if (attempt == 0)
                {
                    ids.Add(run.Id);
                }
                else
                {
                    // The retry stands for the round; the attempt it replaces stays among the noisy attempts.
                    ids[^1] = run.Id;
                }
            },
            succeeded: rate => _succeededRates[step.Cell].Add(rate));

    /// <summary>
    /// A rate search's probe of a cell: not one of its rounds (the search keeps its id), so no round's id or rate. It
    /// shows as the cell's round 1, the one round a searched cell has.
    /// </summary>
    private Task<ScenarioRun> RunProbeAsync(ScenarioManager scenarios, int cell, ResolvedSpec probe, Action cellDone) =>
        RunAttemptsAsync(scenarios, probe, new PlannedRun(1, cell), cellDone, started: null, succeeded: null);

    /// <summary>
    /// A scenario, and while that FAILED on max_noise_percent, up to two more right away. Noise is others' CPU, which
    /// comes and goes (a build, a backup, a cron job), so an immediate retry usually measures a quiet machine; any other
    /// failure says something about the cell and is kept as it is. Each attempt has released its agents, shared memory
    /// and sockets (its Completion) before the next starts.
    /// </summary>
    /// <param name="started">Under the lock with each attempt shown running (0-based attempt).</param>
    /// <param name="succeeded">Under the lock after the last attempt, with its msg/s when it counts as a success.</param>
    /// <returns>The last attempt.</returns>
    private async Task<ScenarioRun> RunAttemptsAsync(
        ScenarioManager scenarios, ResolvedSpec spec, PlannedRun step, Action cellDone, Action<int, ScenarioRun>? started, Action<double>? succeeded)
    {
        for (int attempt = 0; ; attempt++)
        {
            var run = scenarios.Start(spec, suiteId: Id);
            Update(() =>
            {
                _current = step;
                _running = run;
                started?.Invoke(attempt, run);
            });
            if (await Task.WhenAny(run.Completion, _stopRequested.Task).ConfigureAwait(false) != run.Completion)
            {
                run.RequestStop();
                await run.Completion.ConfigureAwait(false);
            }

            cellDone();
            // What the report counts as a success (SuiteReports): COMPLETED with its stats. Read before taking our lock: the run has its own.
            double? rate = run.Snapshot() is { State: RunState.Completed, Stats: { } stats } ? stats.MessagesPerSecond : null;
            bool retry = false;
            Update(() =>
            {
                _done++;
                _running = null;
                _current = null;
                if (run.ExceededNoisePercent is { } noise)
                {
                    retry = attempt < MaxNoiseRetries && !_stopRequested.Task.IsCompleted;
                    _noisyAttempts[step.Cell].Add(new NoisyAttemptRecord(step.Round, run.Id, noise, retry));
                }

                if (!retry && rate is { } messagesPerSecond)
                {
                    succeeded?.Invoke(messagesPerSecond);
                }
            });
            if (!retry)
            {
                return run;
            }
        }
    }

    /// <summary>Waits (PENDING) until a slot is free; false when stopped while waiting.</summary>
    private async Task<bool> ReserveAsync(ScenarioManager scenarios)
    {
        while (!_stopRequested.Task.IsCompleted)
        {
            if (scenarios.TryReserveSuiteSlot(Id))
            {
                return true;
            }

            await Task.WhenAny(_stopRequested.Task, Task.Delay(SlotRetry)).ConfigureAwait(false);
        }

        return false;
    }

    private void Finish(SuiteRunState state, string error) => Update(() =>
    {
        _adaptive?.EndSuite();
        _search?.Abandon();

        _state = state;
        _error = error;
        _endedAt = DateTime.UtcNow;
        _running = null;
        _current = null;
    });

    private void Update(Action change)
    {
        TaskCompletionSource changed;
        lock (_gate)
        {
            change();
            changed = _changed;
            _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        changed.TrySetResult();
        _changedCallback(this);
    }
}
