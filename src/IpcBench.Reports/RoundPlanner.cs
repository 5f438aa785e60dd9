namespace IpcBench.Reports;

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

    /// <summary>
    /// The rounds an adaptive cell takes before its precision may stop it. A median's interval from 2–4 values rests on
    /// a couple of order statistics and comes out narrow by luck often enough to stop a cell on it; and CompareSuites
    /// needs <see cref="ShiftTest.MinimumRepetitions"/> (4) a side for any verdict, so an adaptive suite stays comparable.
    /// </summary>
    public const int MinAdaptiveRepetitions = 5;

    /// <summary>An adaptive cell's bound when max_repetitions is 0: enough to halve a typical ±5 % at 5 rounds, about a 4x longer suite at worst.</summary>
    public const int DefaultMaxAdaptiveRepetitions = 20;

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
