using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>The median's 95 % interval adaptive repetitions stop on, against a hand computation.</summary>
public sealed class MedianPrecisionTests
{
    /// <summary>
    /// Five values worked out by hand: the Harrell–Davis weights of the median of 5 are the increments of the Beta(3, 3)
    /// CDF, 10x³ − 15x⁴ + 6x⁵, over [0, 1/5, ..., 1]; the standard error is √(Σw·x² − (Σw·x)²) (Maritz–Jarrett), and the
    /// interval ± t(0.975, 4 df) = 2.776445 times it.
    /// </summary>
    [Fact]
    public void FiveValues_GiveTheHandComputedHalfWidth()
    {
        double[] values = [110, 96, 103, 98, 100];
        static double Cdf(double x) => 10 * Math.Pow(x, 3) - 15 * Math.Pow(x, 4) + 6 * Math.Pow(x, 5);
        var sorted = values.Order().ToArray();
        var weights = Enumerable.Range(0, 5).Select(i => Cdf((i + 1) / 5.0) - Cdf(i / 5.0)).ToArray();
        double c1 = weights.Zip(sorted, (w, x) => w * x).Sum();
        double c2 = weights.Zip(sorted, (w, x) => w * x * x).Sum();
        double expected = Math.Sqrt(c2 - c1 * c1) * 2.7764451051977987 / c1 * 100;

        var precision = MedianPrecision.HalfWidthPercent(values);

        // 8.6056 %: ±8.66 around a Harrell–Davis median of 100.61.
        Assert.Equal(8.6056, expected, 4);
        Assert.NotNull(precision);
        Assert.Equal(expected, precision.Value, 6);
    }

    [Fact]
    public void IsAPercentOfTheMedian_SoScalingTheValuesKeepsIt()
    {
        double[] values = [110, 96, 103, 98, 100, 101, 99];

        Assert.Equal(MedianPrecision.HalfWidthPercent(values)!.Value, MedianPrecision.HalfWidthPercent([.. values.Select(v => v * 1e4)])!.Value, 9);
    }

    [Fact]
    public void MoreValuesOfTheSameSpread_NarrowIt()
    {
        double[] five = [96, 98, 100, 102, 104];
        double[] fifteen = [.. five, .. five, .. five];

        Assert.True(MedianPrecision.HalfWidthPercent(fifteen) < MedianPrecision.HalfWidthPercent(five) / 1.5);
    }

    [Theory]
    [InlineData(new double[0], null)]
    [InlineData(new[] { 1e6 }, null)]
    [InlineData(new[] { 1e6, 1e6, 1e6 }, 0.0)]
    [InlineData(new[] { 0.0, 0.0 }, null)]
    public void WithoutAnIntervalOrAMedian_ItIsNull_AndIdenticalValuesAreExact(double[] values, double? expected) =>
        Assert.Equal(expected, MedianPrecision.HalfWidthPercent(values));

    /// <summary>The minimum rounds keep an adaptive suite comparable: CompareSuites needs as many a side for any verdict.</summary>
    [Fact]
    public void AdaptiveMinimum_CoversWhatARankTestNeeds() =>
        Assert.True(RoundPlanner.MinAdaptiveRepetitions >= ShiftTest.MinimumRepetitions);
}
