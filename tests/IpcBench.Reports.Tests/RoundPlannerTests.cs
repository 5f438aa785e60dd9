using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>Interleaved rounds: every cell once per round, rounds in order, no cell twice in a row.</summary>
public sealed class RoundPlannerTests
{
    [Theory]
    [InlineData(1, 1)]
    [InlineData(2, 3)]
    [InlineData(5, 1)]
    [InlineData(24, 3)]
    public void EveryRound_RunsEveryCellOnce_BeforeTheNextRound(int cells, int repetitions)
    {
        var plan = RoundPlanner.Plan(cells, repetitions);

        Assert.Equal(cells * repetitions, plan.Count);
        for (int round = 1; round <= repetitions; round++)
        {
            var slice = plan.Skip((round - 1) * cells).Take(cells).ToList();
            Assert.All(slice, run => Assert.Equal(round, run.Round));
            Assert.Equal(Enumerable.Range(0, cells), slice.Select(run => run.Cell).Order());
        }
    }

    [Theory]
    [InlineData(2, 5)]
    [InlineData(3, 3)]
    [InlineData(64, 10)]
    public void NoCell_RunsBackToBack(int cells, int repetitions)
    {
        var plan = RoundPlanner.Plan(cells, repetitions);

        Assert.All(plan.Zip(plan.Skip(1)), pair => Assert.NotEqual(pair.First.Cell, pair.Second.Cell));
    }

    [Theory]
    [InlineData(0, 1)]
    [InlineData(1, 0)]
    [InlineData(1, 101)]
    public void OutOfRange_IsRefused(int cells, int repetitions) =>
        Assert.Throws<ArgumentOutOfRangeException>(() => RoundPlanner.Plan(cells, repetitions));
}
