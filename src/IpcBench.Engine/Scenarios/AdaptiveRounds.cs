using IpcBench.Daemon.Model;
using IpcBench.Reports;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The rounds of an adaptive suite: every cell takes round 1, 2, ... in cell order, as with fixed repetitions, and after
/// each round a cell stops once its median msg/s is known within the target (<see cref="MedianPrecision"/>, over at
/// least <see cref="RoundPlanner.MinAdaptiveRepetitions"/> successful rounds) or it has taken the bound. The cells still
/// going keep interleaving, so a drift of the machine still spreads over them. Not thread-safe: SuiteRun calls it under
/// its lock.
/// </summary>
public sealed class AdaptiveRounds
{
    private readonly AdaptiveTarget _target;
    private readonly CellStop[] _stops;

    public AdaptiveRounds(int cells, AdaptiveTarget target)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(cells, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(target.MaxRepetitions, RoundPlanner.MinAdaptiveRepetitions);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(target.MaxRepetitions, RoundPlanner.MaxRepetitions);
        _target = target;
        _stops = new CellStop[cells];
    }

    /// <summary>1-based round the last <see cref="NextRound"/> started; 0 before the first.</summary>
    public int Round { get; private set; }

    public CellStop Stop(int cell) => _stops[cell];

    /// <summary>The cells taking the next round, in cell order; empty once every cell has stopped.</summary>
    public IReadOnlyList<int> NextRound()
    {
        var cells = Enumerable.Range(0, _stops.Length).Where(c => _stops[c] == CellStop.Unspecified).ToList();
        if (cells.Count > 0)
        {
            Round++;
        }

        return cells;
    }

    /// <summary>After a round: which of the cells that took it stop, and why.</summary>
    /// <param name="succeeded">A cell's msg/s over its successful rounds so far (a failed round adds nothing to its median).</param>
    public void EndRound(Func<int, IReadOnlyList<double>> succeeded)
    {
        for (int cell = 0; cell < _stops.Length; cell++)
        {
            if (_stops[cell] != CellStop.Unspecified)
            {
                continue;
            }

            var values = succeeded(cell);
            if (values.Count >= RoundPlanner.MinAdaptiveRepetitions && MedianPrecision.HalfWidthPercent(values) is { } precision
                && precision <= _target.PrecisionPercent)
            {
                _stops[cell] = CellStop.TargetReached;
            }
            else if (Round >= _target.MaxRepetitions)
            {
                _stops[cell] = CellStop.MaxRepetitions;
            }
        }
    }

    /// <summary>The suite ended (stopped, or failed): the cells still going stop here.</summary>
    public void EndSuite()
    {
        for (int cell = 0; cell < _stops.Length; cell++)
        {
            if (_stops[cell] == CellStop.Unspecified)
            {
                _stops[cell] = CellStop.SuiteStopped;
            }
        }
    }
}
