namespace IpcBench.Daemon.Model;

/// <summary>
/// How many scenarios a suite runs of one cell. One rule, so that the planner's bound, a plan's total and a snapshot's
/// progress cannot disagree about what a search or an adaptive suite may still run.
/// </summary>
public static class ScenariosPerCell
{
    /// <summary>
    /// The most, noise retries aside: a search's closed-loop round and its max_steps probes, an adaptive suite's bound,
    /// or the fixed repetitions.
    /// </summary>
    public static int Most(int repetitions, AdaptiveTarget? adaptive, RateSearchSpec? search) =>
        search is not null ? 1 + search.MaxSteps : adaptive?.MaxRepetitions ?? repetitions;

    /// <summary>
    /// What a running or finished cell counts towards its suite's total: <see cref="Most"/> until its search has ended
    /// or it has reached its adaptive target, then what it took, so a total is an upper bound that only falls.
    /// </summary>
    public static int Expected(int repetitions, AdaptiveTarget? adaptive, RateSearchSpec? search, SuiteCellRecord cell) =>
        search is not null && cell.Search is { Ended: true } ? 1 + cell.Probes.Count
        : search is null && adaptive is not null && cell.Stop == CellStop.TargetReached ? cell.ScenarioIds.Count
        : Most(repetitions, adaptive, search);
}
