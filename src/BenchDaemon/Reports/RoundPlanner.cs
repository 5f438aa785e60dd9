namespace IpcBench.Daemon.Reports;

/// <summary>One scenario of a suite's plan: which round, and which cell (index into the suite's cells).</summary>
public readonly record struct PlannedRun(int Round, int Cell);

/// <summary>
/// The order a suite runs its scenarios in: round 1 runs every cell once, then round 2, and so on. A slow spell of the
/// machine (another tenant, thermal throttling, a page-cache flush) then lands on every cell rather than on all
/// repetitions of one, and no cell runs twice in a row while there are at least two cells.
/// </summary>
public static class RoundPlanner
{
    public const int MaxRepetitions = 100;

    public static IReadOnlyList<PlannedRun> Plan(int cells, int repetitions)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(cells, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(repetitions, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(repetitions, MaxRepetitions);

        var plan = new List<PlannedRun>(cells * repetitions);
        for (int round = 1; round <= repetitions; round++)
        {
            for (int cell = 0; cell < cells; cell++)
            {
                plan.Add(new PlannedRun(round, cell));
            }
        }

        return plan;
    }
}
