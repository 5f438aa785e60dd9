namespace IpcBench.Daemon.Model;

/// <summary>
/// A step in a run's per-second msg/s: the series splits into a before and an after that do not overlap and sit at least
/// <see cref="MinimumRatio"/>x apart. A placement move shows so between the probes when the probes themselves cannot
/// (they probe the CPUs the threads were pinned to, not where the threads are): small-message figures move 2–4x between
/// near and far, and 50x when two spinning threads land on one CPU. Within one placement a second's msg/s wanders by a
/// few percent, a GC pause by ~30 % for one second: neither is two whole seconds on either side 1.5x apart.
/// </summary>
public sealed record SeriesStep(int AtSecond, double BeforeMedian, double AfterMedian)
{
    public const double MinimumRatio = 1.5;

    /// <summary>Seconds needed on each side of a step: one odd second is not a step.</summary>
    public const int MinimumSecondsEachSide = 2;

    /// <summary>The widest step in <paramref name="ratesPerSecond"/> (the measured window's seconds in order), or null.</summary>
    public static SeriesStep? Find(IReadOnlyList<double> ratesPerSecond)
    {
        SeriesStep? widest = null;
        double widestRatio = 0;
        for (int at = MinimumSecondsEachSide; at + MinimumSecondsEachSide <= ratesPerSecond.Count; at++)
        {
            var before = ratesPerSecond.Take(at).ToArray();
            var after = ratesPerSecond.Skip(at).ToArray();
            // The gap between the two sides' nearest values, as a ratio: every second of one side beyond every second of the other.
            double ratio = Math.Max(Ratio(before.Min(), after.Max()), Ratio(after.Min(), before.Max()));
            if (ratio >= MinimumRatio && ratio > widestRatio)
            {
                widestRatio = ratio;
                widest = new SeriesStep(at, Median(before), Median(after));
            }
        }

        return widest;
    }

    private static double Ratio(double high, double low) => low > 0 ? high / low : high > 0 ? double.PositiveInfinity : 0;

    private static double Median(double[] values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
    }
}
