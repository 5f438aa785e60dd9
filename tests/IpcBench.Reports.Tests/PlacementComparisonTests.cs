using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>
/// CompareSuites compares like with like: repetitions split by where their vCPUs sat (the core-to-core probe), a rank
/// test per placement, and INCONCLUSIVE where the data cannot tell.
/// </summary>
public sealed class PlacementComparisonTests
{
    [Fact]
    public void ASuiteAgainstItself_HasNoChange_InAnyCell()
    {
        var suite = ReportSamples.Matrix("self", ReportSamples.ComparedRepetitions);

        var comparison = SuiteComparison.Compare(suite, suite with { SuiteId = "again" }, 5);

        Assert.Equal(Verdict.Same, comparison.Verdict);
        Assert.All(comparison.Cells.SelectMany(c => c.Metrics), m =>
        {
            Assert.Equal(Verdict.Same, m.Verdict);
            Assert.NotNull(m.PValue);
            Assert.Equal((6, 6), (m.BaselineSamples, m.CandidateSamples));
        });
    }

    [Fact]
    public void ThreeRepetitionsASide_AreInconclusive_SayingHowManyAreNeeded()
    {
        var baseline = ReportSamples.Matrix("three", repetitions: 3);

        var comparison = SuiteComparison.Compare(baseline, ReportSamples.Candidate(baseline), 5);

        Assert.Equal(Verdict.Inconclusive, comparison.Verdict);
        var uds = comparison.Cells.First(c => c.Key.Transport == "uds" && c.Key.PayloadBytes == 8);
        Assert.Equal(Verdict.Inconclusive, uds.Verdict);
        Assert.Equal(-20, uds.MessagesPerSecond!.ChangePercent, 9);
        Assert.Null(uds.MessagesPerSecond.PValue);
        Assert.Contains("3 against 3 repetitions: no outcome could reach p ≤ 0.05; 4 or more a side are needed", uds.MessagesPerSecond.Note, StringComparison.Ordinal);
    }

    [Fact]
    public void PlacementsThatDoNotOverlap_AreInconclusive_NotAChange()
    {
        // The same figures, but every baseline repetition near and every candidate far, 2.5x slower: the old median rule
        // called that REGRESSED; it is the host moving the vCPUs.
        var baseline = WithPlacement(ReportSamples.Matrix("near", ReportSamples.ComparedRepetitions), _ => (90, 1));
        var candidate = WithPlacement(baseline, _ => (520, 0.4)) with { SuiteId = "far" };

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        Assert.Equal(Verdict.Inconclusive, comparison.Verdict);
        var cell = comparison.Cells[0];
        Assert.Equal(["near", "far"], cell.Metrics.Select(m => m.Placement).Distinct());
        Assert.All(cell.Metrics, m => Assert.Contains("placements did not overlap", m.Note, StringComparison.Ordinal));
        // The side with no repetition in a class shows no figure (its median would read 0, the change +∞).
        Assert.Contains("| channels 8 B 1:1 full (far) | INCONCLUSIVE | – | ", MarkdownReport.ComparisonSection(comparison), StringComparison.Ordinal);
        Assert.Contains(comparison.Notes, n => n.StartsWith("placement classes by core-to-core probe: near up to 216 ns, far above", StringComparison.Ordinal));
    }

    [Fact]
    public void BothPlacementsOnBothSides_AreComparedApart_AndAChangeInOneIsFoundThere()
    {
        // Rounds alternate near and far (far 2.5x slower, as small messages are here); the candidate lost 20 % near only.
        var baseline = WithPlacement(ReportSamples.Matrix("mixed", repetitions: 10), round => round % 2 == 1 ? (90, 1) : (520, 0.4));
        var candidate = WithPlacement(baseline, round => round % 2 == 1 ? (95, 0.8) : (510, 1)) with { SuiteId = "candidate" };

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        var cell = comparison.Cells.First(c => c.Key.Transport == "uds" && c.Key.PayloadBytes == 1024);
        var near = cell.Metrics.Single(m => m.Metric == "messages_per_second" && m.Placement == "near");
        var far = cell.Metrics.Single(m => m.Metric == "messages_per_second" && m.Placement == "far");
        Assert.Equal((5, 5), (near.BaselineSamples, near.CandidateSamples));
        Assert.Equal(Verdict.Regressed, near.Verdict);
        Assert.InRange(near.ShiftPercent!.Value, -25, -15);
        Assert.True(near.ShiftCiHighPercent < -5, near.Note);
        Assert.Equal(Verdict.Same, far.Verdict);
        Assert.Equal(Verdict.Regressed, cell.Verdict);

        var rows = ReportFormatting.Rows(cell).ToList();
        Assert.Equal(["uds 1 KB 1:1 full (near)", "uds 1 KB 1:1 full (far)"], rows.Select(r => r.Label));
        Assert.Equal([Verdict.Regressed, Verdict.Same], rows.Select(r => r.Verdict));
        Assert.Contains("| uds 1 KB 1:1 full (far) | SAME |", MarkdownReport.ComparisonSection(comparison), StringComparison.Ordinal);
    }

    [Fact]
    public void ABaselineWithoutProbes_IsComparedWithAllOfTheCandidate_InOneClass()
    {
        var baseline = ReportSamples.Matrix("old report", ReportSamples.ComparedRepetitions);
        var candidate = WithPlacement(baseline, round => (round % 2 == 1 ? 90 : 520, 1)) with { SuiteId = "new" };

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        Assert.Equal(Verdict.Same, comparison.Verdict);
        Assert.All(comparison.Cells.SelectMany(c => c.Metrics), m => Assert.Equal((PlacementStrata.All, 6, 6), (m.Placement, m.BaselineSamples, m.CandidateSamples)));
        Assert.Contains(comparison.Notes, n => n.StartsWith("placements not separated: one side has no core-to-core probes", StringComparison.Ordinal));
    }

    /// <summary>Each repetition given a probe and its rate scaled by the round's placement (and latency the other way).</summary>
    private static SuiteReport WithPlacement(SuiteReport report, Func<int, (double Probe, double Scale)> placement) => report with
    {
        Cells = [.. report.Cells.Select(c => c with
        {
            Repetitions = [.. c.Repetitions.Select(r =>
            {
                var (probe, scale) = placement(r.Round);
                return r with
                {
                    ProbeNanoseconds = probe,
                    MessagesPerSecond = r.MessagesPerSecond * scale,
                    BytesPerSecond = r.BytesPerSecond * scale,
                    Latency = r.Latency with { P50 = r.Latency.P50 / scale, P99 = r.Latency.P99 / scale },
                };
            })],
        })],
    };
}
