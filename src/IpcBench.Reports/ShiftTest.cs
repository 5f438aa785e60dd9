using Perfolizer.Mathematics.QuantileEstimators;
using Perfolizer.Mathematics.SignificanceTesting.Base;
using Perfolizer.Mathematics.SignificanceTesting.MannWhitney;
using Perfolizer.Metrology;
using Pragmastat;

namespace IpcBench.Reports;

/// <summary>
/// How far a candidate's repetitions sit from a baseline's, and how sure that is: the Mann–Whitney U test's two-sided
/// p-value (Perfolizer) and the Hodges–Lehmann shift (the median of every candidate − baseline difference: Pragmastat's
/// Shift) with its distribution-free confidence interval, both in percent of the baseline's median. Rank-based, so one
/// outlier moves neither.
/// </summary>
public sealed record ShiftEstimate(double PValue, double ShiftPercent, double CiLowPercent, double CiHighPercent, int BaselineSamples, int CandidateSamples);

public static class ShiftTest
{
    /// <summary>Significance level, before the correction for the number of tests in one comparison.</summary>
    public const double Alpha = 0.05;

    /// <summary>Confidence of the shift's interval.</summary>
    public const double Confidence = 0.95;

    /// <summary>
    /// Whether any outcome of n and m repetitions could be significant at <see cref="Alpha"/>: the smallest two-sided
    /// p-value of the rank test is 2 / C(n + m, n) (every candidate above every baseline), so 3 against 3 never is (0.1).
    /// </summary>
    public static bool CanBeSignificant(int n, int m) => n > 0 && m > 0 && 2 / BinomialCoefficient(n + m, n) <= Alpha;

    /// <summary>The smallest numbers of repetitions per side (equal on both) with which a difference can be significant.</summary>
    public static int MinimumRepetitions => Enumerable.Range(1, 20).First(n => CanBeSignificant(n, n));

    public static ShiftEstimate Estimate(IReadOnlyList<double> baseline, IReadOnlyList<double> candidate)
    {
        if (baseline.Count == 0 || candidate.Count == 0)
        {
            throw new ArgumentException("Both sides need at least one value.");
        }

        var x = new Sample([.. candidate]);
        var y = new Sample([.. baseline]);
        double pValue = MannWhitneyTest.Instance.Perform(x, y, AlternativeHypothesis.TwoSides, Threshold.Zero).PValue;
        double shift = Toolkit.Shift(x, y);
        var differences = new double[candidate.Count * baseline.Count];
        int d = 0;
        foreach (var c in candidate)
        {
            foreach (var b in baseline)
            {
                differences[d++] = c - b;
            }
        }

        Array.Sort(differences);
        var (low, high) = Interval(differences, baseline.Count, candidate.Count);
        double scale = SimpleQuantileEstimator.Instance.Median(y);
        double Percent(double value) => scale == 0 ? (value == 0 ? 0 : double.PositiveInfinity * Math.Sign(value)) : value / Math.Abs(scale) * 100;
        return new ShiftEstimate(pValue, Percent(shift), Percent(low), Percent(high), baseline.Count, candidate.Count);
    }

    /// <summary>
    /// The shift's interval from the order statistics of the sorted differences (Lehmann): the C-th smallest and C-th
    /// largest, C one more than the largest U whose lower tail under the null holds at most (1 − confidence) / 2. With
    /// too few repetitions for that level, the whole range (covering less than the level; such a test cannot be
    /// significant either, see <see cref="CanBeSignificant"/>).
    /// </summary>
    private static (double Low, double High) Interval(double[] sortedDifferences, int n, int m)
    {
        var cdf = MannWhitneyLoefflerExactCdf.Instance;
        int inTail = 0;
        // Perfolizer's Cdf(n, m, u) is P(U < u) (its test takes 1 − Cdf(u) as P(U >= u)): P(U <= k) is Cdf(k + 1).
        while (inTail < sortedDifferences.Length / 2 && cdf.Cdf(n, m, inTail + 1) <= (1 - Confidence) / 2)
        {
            inTail++;
        }

        // inTail U values (0 .. inTail − 1) hold at most the tail: C = inTail, the (C − 1)-th difference counting from 0.
        int index = Math.Max(0, inTail - 1);
        return (sortedDifferences[index], sortedDifferences[sortedDifferences.Length - 1 - index]);
    }

    /// <summary>
    /// Benjamini–Hochberg: each p-value adjusted for the number of tests in one comparison (every metric of every cell
    /// and placement), so a suite of many cells does not find a change by chance; the false discovery rate stays at
    /// <see cref="Alpha"/> while the tests that do differ keep their power (Bonferroni's would need 9+ repetitions a side).
    /// </summary>
    public static double[] AdjustForMultipleTests(IReadOnlyList<double> pValues)
    {
        int count = pValues.Count;
        var order = Enumerable.Range(0, count).OrderByDescending(i => pValues[i]).ToArray();
        var adjusted = new double[count];
        double running = 1;
        for (int rank = count; rank >= 1; rank--)
        {
            int index = order[count - rank];
            running = Math.Min(running, pValues[index] * count / rank);
            adjusted[index] = Math.Min(1, running);
        }

        return adjusted;
    }

    private static double BinomialCoefficient(int n, int k)
    {
        double result = 1;
        for (int i = 1; i <= k; i++)
        {
            result = result * (n - k + i) / i;
        }

        return result;
    }
}
