using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>The statistics behind CompareSuites' verdicts, against values worked out by hand (and R's wilcox.test).</summary>
public sealed class ShiftTestTests
{
    [Fact]
    public void ThreeAgainstThree_CanNeverBeSignificant_FourAgainstFourCan()
    {
        Assert.False(ShiftTest.CanBeSignificant(3, 3)); // smallest two-sided p: 2 / C(6, 3) = 0.1
        Assert.True(ShiftTest.CanBeSignificant(4, 4)); // 2 / C(8, 4) = 0.029
        Assert.False(ShiftTest.CanBeSignificant(1, 20)); // 2 / 21
        Assert.False(ShiftTest.CanBeSignificant(0, 5));
        Assert.Equal(4, ShiftTest.MinimumRepetitions);
    }

    [Fact]
    public void Estimate_OfSeparatedSamples_GivesTheExactP_TheHodgesLehmannShift_AndItsInterval()
    {
        double[] baseline = [1, 2, 3, 4, 5];
        double[] candidate = [6, 7, 8, 9, 10];

        var estimate = ShiftTest.Estimate(baseline, candidate);

        // Every candidate above every baseline: p = 2 / C(10, 5) = 2 / 252.
        Assert.Equal(2.0 / 252, estimate.PValue, 6);
        // The 25 differences are 1..9 (1, 2, 3, 4, 5, 4, 3, 2, 1 times): median 5, and the exact 95 % interval is the
        // 3rd smallest and 3rd largest (P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252): [2, 8]. As R's
        // wilcox.test(candidate, baseline, conf.int = TRUE) gives. In percent of the baseline's median, 3.
        Assert.Equal(5.0 / 3 * 100, estimate.ShiftPercent, 9);
        Assert.Equal(2.0 / 3 * 100, estimate.CiLowPercent, 9);
        Assert.Equal(8.0 / 3 * 100, estimate.CiHighPercent, 9);
        Assert.Equal((5, 5), (estimate.BaselineSamples, estimate.CandidateSamples));
    }

    [Fact]
    public void Estimate_OfIdenticalSamples_IsNoShift_AndNotSignificant()
    {
        double[] values = [10, 11, 12, 13, 14, 15];

        var estimate = ShiftTest.Estimate(values, values);

        Assert.True(estimate.PValue > 0.5, $"p = {estimate.PValue}");
        Assert.Equal(0, estimate.ShiftPercent, 9);
        Assert.True(estimate.CiLowPercent < 0 && estimate.CiHighPercent > 0, $"[{estimate.CiLowPercent}, {estimate.CiHighPercent}]");
    }

    [Fact]
    public void BenjaminiHochberg_AdjustsEachPValue_ForTheNumberOfTests()
    {
        // Sorted: 0.01 (x4/1 = 0.04), 0.03 (x4/2 = 0.06), 0.04 (x4/3 = 0.0533), 0.2 (x4/4); then the running minimum from the top.
        var adjusted = ShiftTest.AdjustForMultipleTests([0.01, 0.04, 0.03, 0.2]);

        Assert.Equal([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2], adjusted, (a, b) => Math.Abs(a - b) < 1e-12);
    }

    [Theory]
    [InlineData(new double[] { 80, 95, 110, 470, 520, 610 }, 227.0)] // sqrt(110 * 470): the widest gap, 4.3x
    [InlineData(new double[] { 75, 90, 140, 150 }, null)] // widest gap 1.6x: one class
    [InlineData(new double[] { }, null)]
    public void Strata_SplitTheProbesAtTheirWidestGap_OnlyWhenItIsTwofold(double[] probes, double? boundary)
    {
        var strata = PlacementStrata.Of(probes.Select(p => (double?)p));

        Assert.Equal(boundary, strata.BoundaryNanoseconds is { } b ? Math.Round(b) : null);
        Assert.Equal(PlacementStrata.Unknown, strata.ClassOf(null));
        if (boundary is null)
        {
            Assert.Equal(PlacementStrata.All, strata.ClassOf(100));
        }
        else
        {
            Assert.Equal((PlacementStrata.Near, PlacementStrata.Far), (strata.ClassOf(110), strata.ClassOf(470)));
        }
    }
    [Theory]
    [InlineData(5.2, 3.0, 7.5, 0.01, Verdict.Same)] // the point beyond 5 %, the interval reaching within it: not shown
    [InlineData(5.8, 5.5, 7.5, 0.01, Verdict.Improved)] // the whole interval beyond
    [InlineData(5.8, 5.5, 7.5, 0.2, Verdict.Same)] // beyond, but not significant
    [InlineData(-6.0, -8.0, -5.0, 0.01, Verdict.Same)] // a bound of exactly the threshold is not beyond it
    [InlineData(-6.0, -8.0, -5.1, 0.01, Verdict.Regressed)]
    public void Decide_NeedsSignificance_AndTheWholeIntervalBeyondTheThreshold(double shift, double low, double high, double p, Verdict expected)
    {
        var tested = new MetricChange("messages_per_second", "msg/s", 100, 100 + shift, 1 + shift / 100, shift, HigherIsBetter: true, Verdict.Unspecified)
        {
            ShiftPercent = shift,
            ShiftCiLowPercent = low,
            ShiftCiHighPercent = high,
        };

        var decided = CellComparer.Decide(tested, p, thresholdPercent: 5);

        Assert.Equal(expected, decided.Verdict);
        if (expected == Verdict.Same && p <= ShiftTest.Alpha)
        {
            Assert.EndsWith("significant, but the interval reaches within ±5 %", decided.Note, StringComparison.Ordinal);
        }
    }
}
