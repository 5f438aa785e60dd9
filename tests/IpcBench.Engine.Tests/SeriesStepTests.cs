using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The placement rule's step search runs on every tick of every scenario, soaks included: it must find what the
/// definition finds (checked against the definition written out, every split tried) in time linear in the series, over
/// a series whose memory is bounded however long the soak.
/// </summary>
public sealed class SeriesStepTests
{
    [Fact]
    public void Find_AgreesWithTheDefinition_OnRandomSeries()
    {
        var rng = new Random(11);
        for (int i = 0; i < 3_000; i++)
        {
            int n = rng.Next(0, 40);
            double level = 1e6;
            var series = new double[n];
            for (int s = 0; s < n; s++)
            {
                if (rng.Next(8) == 0)
                {
                    level *= 0.3 + 2.4 * rng.NextDouble();
                }

                series[s] = level * (0.9 + 0.2 * rng.NextDouble());
            }

            Assert.Equal(ByDefinition(series), SeriesStep.Find(series));
        }
    }

    [Fact]
    public void Find_OnTwoHoursOfSeconds_TakesLinearWork()
    {
        // The quadratic search took 144 ms and allocated 396 MiB per call at 7,200 seconds, on every tick of every scenario.
        var series = Enumerable.Range(0, 7_200).Select(i => 4_000.0 + i % 7).ToArray();
        SeriesStep.Find(series);
        long before = GC.GetAllocatedBytesForCurrentThread();
        SeriesStep.Find(series);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.InRange(allocated, 0, 3 * 7_200 * sizeof(double));
    }

    [Fact]
    public void RateSeries_KeepsSecondsForAnHour_ThenMergesPairs_InBoundedMemory()
    {
        var series = new RateSeries();
        for (int s = 0; s < RateSeries.MaxPoints - 1; s++)
        {
            series.Add(s);
        }

        Assert.Equal((RateSeries.MaxPoints - 1, 1), (series.Count, series.SecondsPerPoint));
        series.Add(RateSeries.MaxPoints - 1);
        Assert.Equal((RateSeries.MaxPoints / 2, 2), (series.Count, series.SecondsPerPoint));
        Assert.Equal(0.5, series.ToArray()[0]);
        Assert.Equal(RateSeries.MaxPoints - 1.5, series.ToArray()[^1]);

        // A day of seconds stays within the bound.
        for (int s = 0; s < 86_400; s++)
        {
            series.Add(1);
        }

        Assert.InRange(series.Count, RateSeries.MaxPoints / 2, RateSeries.MaxPoints - 1);
        Assert.Equal(32, series.SecondsPerPoint);
    }

    [Fact]
    public void AStepAfterHours_IsFound_AtTheSecondItHappened_WithinAPoint()
    {
        var series = new RateSeries();
        for (int s = 0; s < 3 * 3_600; s++)
        {
            series.Add(s < 9_000 ? 4e6 : 1e6);
        }

        var step = SeriesStep.Find(series.ToArray(), series.SecondsPerPoint);

        Assert.NotNull(step);
        Assert.InRange(step.AtSecond, 9_000 - series.SecondsPerPoint, 9_000 + series.SecondsPerPoint);
        Assert.Equal((4e6, 1e6), (step.BeforeMedian, step.AfterMedian));
    }

    private static SeriesStep? ByDefinition(double[] rates)
    {
        SeriesStep? widest = null;
        double widestRatio = 0;
        for (int at = SeriesStep.MinimumSecondsEachSide; at + SeriesStep.MinimumSecondsEachSide <= rates.Length; at++)
        {
            var before = rates[..at];
            var after = rates[at..];
            double ratio = Math.Max(Ratio(before.Min(), after.Max()), Ratio(after.Min(), before.Max()));
            if (ratio >= SeriesStep.MinimumRatio && ratio > widestRatio)
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
