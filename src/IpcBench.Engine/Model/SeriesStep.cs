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

    /// <summary>
    /// The widest step in <paramref name="points"/> (the measured window's msg/s in order, each point the mean of
    /// <paramref name="secondsPerPoint"/> seconds), or null. Linear in the points: it runs on every tick of a soak.
    /// </summary>
    public static SeriesStep? Find(IReadOnlyList<double> points, int secondsPerPoint = 1)
    {
        int n = points.Count;
        int minimumPoints = Math.Max(1, (MinimumSecondsEachSide + secondsPerPoint - 1) / secondsPerPoint);
        if (n < 2 * minimumPoints)
        {
            return null;
        }

        // suffixMin[i], suffixMax[i]: over points[i..]; the prefix side is carried along the scan.
        var suffixMin = new double[n];
        var suffixMax = new double[n];
        suffixMin[n - 1] = suffixMax[n - 1] = points[n - 1];
        for (int i = n - 2; i >= 0; i--)
        {
            suffixMin[i] = Math.Min(points[i], suffixMin[i + 1]);
            suffixMax[i] = Math.Max(points[i], suffixMax[i + 1]);
        }

        double prefixMin = double.MaxValue, prefixMax = double.MinValue;
        int widestAt = -1;
        double widestRatio = 0;
        for (int at = 1; at + minimumPoints <= n; at++)
        {
            prefixMin = Math.Min(prefixMin, points[at - 1]);
            prefixMax = Math.Max(prefixMax, points[at - 1]);
            if (at < minimumPoints)
            {
                continue;
            }

            // The gap between the two sides' nearest values, as a ratio: every point of one side beyond every point of the other.
            double ratio = Math.Max(Ratio(prefixMin, suffixMax[at]), Ratio(suffixMin[at], prefixMax));
            if (ratio >= MinimumRatio && ratio > widestRatio)
            {
                widestRatio = ratio;
                widestAt = at;
            }
        }

        return widestAt < 0 ? null
            : new SeriesStep(widestAt * secondsPerPoint, Median(points, 0, widestAt), Median(points, widestAt, n));
    }

    private static double Ratio(double high, double low) => low > 0 ? high / low : high > 0 ? double.PositiveInfinity : 0;

    private static double Median(IReadOnlyList<double> points, int from, int to)
    {
        var sorted = new double[to - from];
        for (int i = from; i < to; i++)
        {
            sorted[i - from] = points[i];
        }

        Array.Sort(sorted);
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
    }
}
