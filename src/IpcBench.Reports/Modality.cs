using System.Globalization;
using Pragmastat;

namespace IpcBench.Reports;

public enum ModalityKind
{
    /// <summary>Fewer than <see cref="Modality.MinimumRepetitions"/> values: the rule does not guess.</summary>
    TooFew,
    Unimodal,
    Multimodal,
}

/// <summary>How many repetitions of a mode ran in a placement class (<see cref="PlacementStrata"/>).</summary>
public sealed record PlacementCount(string Placement, int Count);

/// <summary>A group of repetitions: its median (the location), its range, and the placement classes it ran in.</summary>
public sealed record RepetitionMode(double Location, double Min, double Max, int Count, IReadOnlyList<PlacementCount> Placements);

/// <summary>
/// Whether a cell's repetitions of one figure form one group or several, and whether the groups are the placements.
/// </summary>
/// <remarks>
/// <para>
/// The rule: with fewer than <see cref="MinimumRepetitions"/> values, too few to tell. Otherwise the sorted values are
/// cut at their widest gap between two neighbours, leaving at least <see cref="MinimumModeSize"/> values on each side
/// (one value is an outlier, not a mode), when the groups that meet there sit at least <see cref="MinimumDisparity"/> of
/// their own spreads apart: Pragmastat's Disparity, the Hodges–Lehmann shift between them over their pooled Shamos
/// spread (a rank-based effect size, so one stray value moves neither). Each side is grouped by the same rule first, so
/// three groups (two placements and a slow spell) come out as three modes; a cut that fails leaves its values one mode.
/// [1.0, 1.05, 0.98, 3.1, 3.0, 2.9] M is bimodal (disparity about 26), [1.0, 1.03, 0.97, 1.02, 0.99] M unimodal
/// (about 2), four values too few.
/// </para>
/// <para>
/// The numbers come from simulated samples of 5 to 20 values, 4000 of each: unimodal ones (normal, uniform, log-normal,
/// exponential noise) came out multimodal in 0–3.8 % of cases (uniform ±6 % noise over 5 values the most), two groups
/// 2x apart with 5 % noise bimodal in 80–100 %, 3x apart in all, a 1.3x step with 3 % noise about half the time, and
/// three groups (1x, 3x, 6x, 5 % noise) trimodal in 79–95 % from 6 values on. Four values would need two modes of two,
/// and raised the false alarms to 5.4 %.
/// </para>
/// <para>
/// Not Perfolizer's LowlandModalityDetector: on 6–12 values it finds one mode whatever its sensitivity and precision,
/// even for two tight groups 3x apart. Its quantile-respectful density histogram (Harrell–Davis) is highest at the
/// smallest and largest of so few values, and it looks for peaks only in the histogram's inner bins, so groups at both
/// ends of the sample, which is where two placements put them, are never a mode; it finds about half of such samples at
/// 30 values, more than a suite runs (ModalityTests pins this, so a Perfolizer that changes it shows).
/// </para>
/// </remarks>
public sealed record Modality(ModalityKind Kind, int Repetitions, IReadOnlyList<RepetitionMode> Modes, bool ByPlacement, string Text)
{
    public const int MinimumRepetitions = 5;

    public const int MinimumModeSize = 2;

    public const double MinimumDisparity = 8;

    /// <summary>The narrowest a group counts as: 1 % of its level, about run-to-run noise here (see <see cref="Disparity"/>).</summary>
    public const double MinimumRelativeSpread = 0.01;

    /// <summary>Modes found: 0 when too few to tell.</summary>
    public int ModeCount => Kind == ModalityKind.TooFew ? 0 : Modes.Count;

    /// <summary>
    /// The modality of <paramref name="values"/> (one per succeeded repetition), with each value's placement class beside
    /// it; <paramref name="format"/> writes a mode's location in the text, e.g. "22.00 M".
    /// </summary>
    public static Modality Of(IReadOnlyList<double> values, IReadOnlyList<string> placements, Func<double, string> format)
    {
        if (values.Count != placements.Count)
        {
            throw new ArgumentException("one placement class per value is needed", nameof(placements));
        }

        if (values.Count < MinimumRepetitions)
        {
            return new Modality(ModalityKind.TooFew, values.Count, [], false,
                string.Create(CultureInfo.InvariantCulture, $"too few repetitions to tell ({values.Count}; {MinimumRepetitions} needed)"));
        }

        var sorted = values.Select((v, i) => (Value: v, Placement: placements[i])).OrderBy(p => p.Value).ToArray();
        var modes = Split(sorted).Select(ToMode).ToList();
        if (modes.Count == 1)
        {
            return new Modality(ModalityKind.Unimodal, values.Count, modes, false, "unimodal");
        }

        // By placement: each mode ran in one class of its own, near or far, so the second mode is where the vCPUs sat.
        bool byPlacement = modes.All(m => m.Placements is [{ Placement: PlacementStrata.Near or PlacementStrata.Far }])
            && modes.Select(m => m.Placements[0].Placement).Distinct().Count() == modes.Count;
        string name = modes.Count switch { 2 => "bimodal", 3 => "trimodal", var k => $"{k} modes" };
        string text = $"{name}{(byPlacement ? " by placement" : string.Empty)}: " +
            string.Join(", ", modes.Select(m => $"{format(m.Location)} ({Composition(m)})"));
        return new Modality(ModalityKind.Multimodal, values.Count, modes, byPlacement, text);
    }

    /// <summary>The 1-based mode a value fell in; null when too few to tell (or the value is not one of the sample's).</summary>
    public int? ModeOf(double value)
    {
        int index = Kind == ModalityKind.TooFew ? -1 : Modes.ToList().FindIndex(m => value >= m.Min && value <= m.Max);
        return index < 0 ? null : index + 1;
    }

    /// <summary>
    /// The groups of <paramref name="sorted"/>: each side of its widest gap grouped first, so the test at this gap
    /// compares the two groups that meet there (with a side's other groups in, its spread would hide a third mode).
    /// </summary>
    private static List<(double Value, string Placement)[]> Split((double Value, string Placement)[] sorted)
    {
        if (WidestGap(sorted) is not { } at)
        {
            return [sorted];
        }

        var lower = Split(sorted[..at]);
        var upper = Split(sorted[at..]);
        return Disparity(lower[^1], upper[0]) >= MinimumDisparity ? [.. lower, .. upper] : [sorted];
    }

    /// <summary>Where the widest gap between neighbours starts the upper side, each side keeping a mode's worth of values.</summary>
    private static int? WidestGap((double Value, string Placement)[] sorted)
    {
        int? at = null;
        double widest = 0;
        for (int i = MinimumModeSize; i <= sorted.Length - MinimumModeSize; i++)
        {
            double gap = sorted[i].Value - sorted[i - 1].Value;
            if (gap > widest)
            {
                widest = gap;
                at = i;
            }
        }

        return at;
    }

    /// <summary>
    /// Pragmastat's Disparity (Shift over AvgSpread) with the spread floored at <see cref="MinimumRelativeSpread"/> of the
    /// groups' level: repeated identical values (latency percentiles share HDR buckets, and pooled runs repeat) would
    /// otherwise have no spread and sit infinitely apart from anything. NaN (all zero) never splits.
    /// </summary>
    private static double Disparity((double Value, string Placement)[] lower, (double Value, string Placement)[] upper)
    {
        var high = new Sample([.. upper.Select(p => p.Value)]);
        var low = new Sample([.. lower.Select(p => p.Value)]);
        double level = Math.Abs(lower.Concat(upper).Average(p => p.Value));
        return Toolkit.Shift(high, low).NominalValue / Math.Max(Toolkit.AvgSpread(high, low).NominalValue, MinimumRelativeSpread * level);
    }

    private static RepetitionMode ToMode((double Value, string Placement)[] group)
    {
        var spread = Spread.Of(group.Select(p => p.Value));
        var placements = group.GroupBy(p => p.Placement).OrderBy(g => PlacementStrata.Rank(g.Key))
            .Select(g => new PlacementCount(g.Key, g.Count())).ToList();
        return new RepetitionMode(spread.Median, spread.Min, spread.Max, group.Length, placements);
    }

    /// <summary>"near ×3", "near ×2, far ×1"; just "×3" when the probes did not tell placements apart.</summary>
    private static string Composition(RepetitionMode mode) =>
        mode.Placements.All(p => p.Placement is PlacementStrata.All or PlacementStrata.Unknown)
            ? $"×{mode.Count}"
            : string.Join(", ", mode.Placements.Select(p => $"{p.Placement} ×{p.Count}"));
}
