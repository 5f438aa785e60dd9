using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>Several runs of one build pooled into one side of a comparison (`compare a.json,b.json c.json,d.json`).</summary>
public sealed class ReportPoolTests
{
    [Fact]
    public void Pool_ConcatenatesEachCellsRepetitions_InTheOrderGiven_RenumberingRounds()
    {
        var first = ReportSamples.Matrix("first", 3);
        var second = ReportSamples.Matrix("second", 2) with
        {
            SuiteId = "suite-second",
            Cells = [.. ReportSamples.Matrix("second", 2).Cells.Take(2)],
        };

        var pooled = ReportFile.Pool("baseline", [first, second]);

        Assert.Equal("suite-0002+1", pooled.SuiteId);
        Assert.Equal(first.Cells.Select(c => c.Key), pooled.Cells.Select(c => c.Key));
        var cell = pooled.Cells[0];
        Assert.Equal([.. first.Cells[0].Repetitions.Select(r => r.ScenarioId), .. second.Cells[0].Repetitions.Select(r => r.ScenarioId)],
            cell.Repetitions.Select(r => r.ScenarioId));
        Assert.Equal([1, 2, 3, 4, 5], cell.Repetitions.Select(r => r.Round));
        Assert.Equal(3, pooled.Cells[^1].Repetitions.Count);
        Assert.Equal(5, pooled.Repetitions);
    }

    [Fact]
    public void Pool_RefusesRunsOfAnotherMachine_ButNotAnotherProbe()
    {
        var first = ReportSamples.Matrix("first", 3);
        var probed = first with { SuiteId = "probed", Environment = first.Environment with { CoreToCoreNanoseconds = 90 } };
        Assert.Equal(6, ReportFile.Pool("baseline", [first, probed]).Cells[0].Repetitions.Count);

        var other = first with { SuiteId = "elsewhere", Environment = first.Environment with { Hostname = "lab-02" } };
        var e = Assert.Throws<ArgumentException>(() => ReportFile.Pool("candidate", [first, other]));
        Assert.StartsWith("candidate: elsewhere ran in another environment than suite-0002 (", e.Message, StringComparison.Ordinal);
    }
}
