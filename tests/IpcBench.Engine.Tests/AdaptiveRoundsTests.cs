using IpcBench.Daemon.Model;
using IpcBench.Reports;
using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Tests;

/// <summary>Adaptive repetitions' stopping rule, driven by made-up rounds: no scenario runs.</summary>
public sealed class AdaptiveRoundsTests
{
    [Fact]
    public void APreciseCell_StopsAtTheMinimum_WhileANoisyOneAndAFailingOneGoOnToTheBound()
    {
        var rounds = new AdaptiveRounds(3, new AdaptiveTarget(PrecisionPercent: 2, MaxRepetitions: 8));
        // Cell 0 the same every round (within target from round 2 on), cell 1 swinging ±50 %, cell 2 failing every round.
        var run = Drive(rounds, 3, (cell, round) => cell switch { 0 => 1e6, 1 => round % 2 == 0 ? 5e5 : 1.5e6, _ => null });

        Assert.Equal([5, 8, 8], run.RoundsOf);
        Assert.Equal([CellStop.TargetReached, CellStop.MaxRepetitions, CellStop.MaxRepetitions], Enumerable.Range(0, 3).Select(rounds.Stop));
        // Interleaved: every round takes the cells still going, in cell order.
        Assert.All(run.Rounds.Take(5), cells => Assert.Equal([0, 1, 2], cells));
        Assert.All(run.Rounds.Skip(5), cells => Assert.Equal([1, 2], cells));
        Assert.Equal(8, rounds.Round);
        Assert.Empty(rounds.NextRound());
    }

    /// <summary>A cell that settles after a noisy start stops at the first round whose precision is within target.</summary>
    [Fact]
    public void ACellThatSettles_StopsAtTheFirstRoundWithinTarget()
    {
        double[] start = [9.0e5, 1.1e6, 9.5e5, 1.05e6, 1.0e6];
        double Rate(int round) => round <= start.Length ? start[round - 1] : 1.0e6 + (round % 3 - 1) * 1e3;
        const double Target = 3;
        var rounds = new AdaptiveRounds(1, new AdaptiveTarget(Target, MaxRepetitions: 40));

        var run = Drive(rounds, 1, (_, round) => Rate(round));

        int stoppedAt = run.RoundsOf[0];
        Assert.Equal(CellStop.TargetReached, rounds.Stop(0));
        double Precision(int n) => MedianPrecision.HalfWidthPercent([.. Enumerable.Range(1, n).Select(Rate)])!.Value;
        Assert.True(Precision(5) > Target, $"the noisy start must not be within target already ({Precision(5):0.##} %)");
        Assert.InRange(stoppedAt, 6, 39);
        Assert.True(Precision(stoppedAt) <= Target, $"stopped at round {stoppedAt} at {Precision(stoppedAt):0.##} %");
        Assert.True(Precision(stoppedAt - 1) > Target, $"round {stoppedAt - 1} was already within target ({Precision(stoppedAt - 1):0.##} %)");
    }

    /// <summary>The minimum counts successful rounds: an interval over fewer would stop on luck.</summary>
    [Fact]
    public void FailedRounds_DoNotCountTowardsTheMinimum()
    {
        var rounds = new AdaptiveRounds(1, new AdaptiveTarget(PrecisionPercent: 2, MaxRepetitions: 20));

        var run = Drive(rounds, 1, (_, round) => round is 2 or 4 ? null : 1e6);

        Assert.Equal(RoundPlanner.MinAdaptiveRepetitions + 2, run.RoundsOf[0]);
        Assert.Equal(CellStop.TargetReached, rounds.Stop(0));
    }

    [Fact]
    public void AStoppedSuite_StopsTheCellsStillGoing_AndKeepsWhyTheOthersStopped()
    {
        var rounds = new AdaptiveRounds(2, new AdaptiveTarget(PrecisionPercent: 2, MaxRepetitions: 20));
        var values = new List<double>[] { [], [] };
        for (int round = 1; round <= 5; round++)
        {
            Assert.NotEmpty(rounds.NextRound());
            values[0].Add(1e6);
            values[1].Add(round % 2 == 0 ? 5e5 : 1.5e6);
            rounds.EndRound(cell => values[cell]);
        }

        rounds.EndSuite();

        Assert.Equal(CellStop.TargetReached, rounds.Stop(0));
        Assert.Equal(CellStop.SuiteStopped, rounds.Stop(1));
        Assert.Empty(rounds.NextRound());
    }

    [Theory]
    [InlineData(4)]
    [InlineData(101)]
    public void ABoundOutsideTheRange_IsRefused(int max) =>
        Assert.Throws<ArgumentOutOfRangeException>(() => new AdaptiveRounds(1, new AdaptiveTarget(2, max)));

    private sealed record Run(List<IReadOnlyList<int>> Rounds, int[] RoundsOf);

    /// <summary>Runs rounds until every cell stopped; <paramref name="rate"/>(cell, round) is the round's msg/s, null for a failed one.</summary>
    private static Run Drive(AdaptiveRounds rounds, int cellCount, Func<int, int, double?> rate)
    {
        var values = Enumerable.Range(0, cellCount).Select(_ => new List<double>()).ToArray();
        var taken = new int[cellCount];
        var log = new List<IReadOnlyList<int>>();
        for (var cells = rounds.NextRound(); cells.Count > 0; cells = rounds.NextRound())
        {
            Assert.True(log.Count < RoundPlanner.MaxRepetitions, "the rounds never ended");
            log.Add(cells);
            foreach (var cell in cells)
            {
                taken[cell]++;
                if (rate(cell, rounds.Round) is { } value)
                {
                    values[cell].Add(value);
                }
            }

            rounds.EndRound(cell => values[cell]);
        }

        return new Run(log, taken);
    }
}
