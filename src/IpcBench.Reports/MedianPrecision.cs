using Perfolizer.Mathematics.Common;
using Perfolizer.Mathematics.QuantileEstimators;
using Pragmastat;

namespace IpcBench.Reports;

/// <summary>
/// How well a cell's median msg/s is known: the 95 % confidence interval of the median (Perfolizer's Harrell–Davis
/// estimate with the Maritz–Jarrett standard error and Student's t), half its width in percent of the estimate. What
/// adaptive repetitions stop on and every report shows. Maritz–Jarrett rather than the distribution-free interval
/// between two order statistics: that one cannot reach 95 % below 6 values (with 5, [min, max] covers 93.75 %), and
/// it jumps between neighbouring values where a stopping rule wants a width that narrows smoothly as rounds are added.
/// </summary>
public static class MedianPrecision
{
    public const double Confidence = 0.95;

    /// <summary>
    /// The interval's half-width in percent of the median; null when there is no interval (fewer than 2 values) or
    /// nothing to relate it to (a median of 0).
    /// </summary>
    public static double? HalfWidthPercent(IReadOnlyList<double> values)
    {
        if (values.Count < 2)
        {
            return null;
        }

        if (values.All(v => v == values[0]))
        {
            // Identical values: no spread, so no width. Perfolizer's c2 − c1² can come out a hair below 0 here, and its root NaN.
            return values[0] == 0 ? null : 0;
        }

        var interval = HarrellDavisQuantileEstimator.Instance
            .QuantileConfidenceIntervalEstimator(new Sample([.. values]), Probability.Median)
            .ConfidenceInterval(new ConfidenceLevel(Confidence));
        if (interval.Estimation == 0 || !double.IsFinite(interval.Upper) || !double.IsFinite(interval.Lower))
        {
            return null;
        }

        return (interval.Upper - interval.Lower) / 2 / Math.Abs(interval.Estimation) * 100;
    }
}
