using System.Globalization;

namespace IpcBench.Daemon.Model;

/// <summary>One learned placement class: its name and the range of the probes that fell in it.</summary>
/// <param name="UpperBoundaryNs">Where the next class begins (the valley's bottom); +∞ for the farthest.</param>
public sealed record PlacementClass(string Name, double MinNs, double MaxNs, int Probes, double UpperBoundaryNs);

/// <summary>
/// Where a machine's vCPUs sit, learned from its own core-to-core probe history: the host of issue 34 moves two vCPUs
/// between a near placement (~50–170 ns), a middle one (~200–350 ns) and a far one (~400–1000 ns), and one probe has
/// a spread of its own inside each. A fixed ratio between two probes cannot tell those apart (51 and 173 ns are one
/// placement, 173 and 200 are two); the history can, because the placements are where the probes pile up.
/// </summary>
/// <remarks>
/// The classes are the heaps of a kernel density of the log probes (Gaussian, bandwidth <see cref="Bandwidth"/>), cut
/// at its deepest valleys (at most <see cref="MaximumClasses"/> − 1 of them) where the valley's density is at most
/// <see cref="MaximumValleyDepth"/> of the lower of the two heaps' peaks and each heap holds at least
/// <see cref="MinimumClassProbes"/> probes and <see cref="MinimumClassShare"/> of them. A valley, not a gap: a probe or two
/// between two placements do not join them, and a wide placement (near spans 3.4x) is not cut where it thins out.
/// </remarks>
public sealed record PlacementClasses(IReadOnlyList<PlacementClass> Classes, int ProbeCount)
{
    /// <summary>Fewer probes than this and nothing is learned yet: a fresh database's first scenarios fall back to the ratio rule.</summary>
    public const int MinimumProbes = 20;

    /// <summary>The host moves vCPUs between three placements; more classes would be the probe's own spread.</summary>
    public const int MaximumClasses = 3;

    public const int MinimumClassProbes = 3;

    /// <summary>A class seen less often than this is outliers of a neighbour (a probe taken on a busy moment), not a placement.</summary>
    public const double MinimumClassShare = 0.05;

    /// <summary>The density's bandwidth in ln(ns): ~5 %, a third of the gaps between this host's placements (170 → 200 ns is 16 %).</summary>
    public const double Bandwidth = 0.05;

    /// <summary>A valley this shallow or shallower (density against the lower neighbouring peak) separates two heaps.</summary>
    public const double MaximumValleyDepth = 0.5;

    /// <summary>How many of a machine's latest probes the daemon learns from: recent enough to follow a host's change.</summary>
    public const int HistoryLimit = 1000;

    public static readonly PlacementClasses NotLearned = new([], 0);

    /// <summary>Whether enough probes were seen to learn from (one class is learned too: the host never moved).</summary>
    public bool Learned => Classes.Count > 0;

    public static PlacementClasses Learn(IEnumerable<double> probes)
    {
        var sorted = probes.Where(p => p > 0 && double.IsFinite(p)).Order().ToArray();
        if (sorted.Length < MinimumProbes)
        {
            return new PlacementClasses([], sorted.Length);
        }

        var logs = sorted.Select(p => Math.Log(p)).ToArray();
        var cuts = Valleys(logs);
        return new PlacementClasses(Build(sorted, cuts), sorted.Length);
    }

    /// <summary>The index of the class a probe falls in (0 nearest); null when nothing is learned or there is no probe.</summary>
    public int? IndexOf(double? probeNs)
    {
        if (!Learned || probeNs is not { } ns || ns <= 0)
        {
            return null;
        }

        for (int i = 0; i + 1 < Classes.Count; i++)
        {
            if (ns < UpperBoundary(i))
            {
                return i;
            }
        }

        return Classes.Count - 1;
    }

    public string? NameOf(double? probeNs) => IndexOf(probeNs) is { } i ? Classes[i].Name : null;

    /// <summary>Where class <paramref name="index"/> ends and the next begins: the bottom of the valley between them.</summary>
    public double UpperBoundary(int index) => Classes[index].UpperBoundaryNs;

    /// <summary>e.g. "near ≤ 170 ns, middle 200–350 ns, far ≥ 400 ns, learned from 57 probes".</summary>
    public string Describe()
    {
        if (!Learned)
        {
            return Invariant($"placement classes not learned yet ({ProbeCount} of {MinimumProbes} probes)");
        }

        if (Classes.Count == 1)
        {
            return Invariant($"one placement class, {Classes[0].MinNs:0}–{Classes[0].MaxNs:0} ns, learned from {ProbeCount} probes");
        }

        var parts = Classes.Select((c, i) => i == 0 ? Invariant($"{c.Name} ≤ {c.MaxNs:0} ns")
            : i == Classes.Count - 1 ? Invariant($"{c.Name} ≥ {c.MinNs:0} ns")
            : Invariant($"{c.Name} {c.MinNs:0}–{c.MaxNs:0} ns"));
        return Invariant($"{string.Join(", ", parts)}, learned from {ProbeCount} probes");
    }

    /// <summary>The ln(ns) at which to cut the sorted log probes: the deepest valleys that leave real heaps on both sides.</summary>
    private static List<double> Valleys(double[] logs)
    {
        double step = Bandwidth / 10;
        double from = logs[0] - 3 * Bandwidth;
        int points = (int)Math.Ceiling((logs[^1] + 3 * Bandwidth - from) / step) + 1;
        var density = new double[points];
        for (int g = 0; g < points; g++)
        {
            double x = from + g * step;
            foreach (double v in logs)
            {
                double z = (x - v) / Bandwidth;
                density[g] += Math.Exp(-0.5 * z * z);
            }
        }

        var minima = Enumerable.Range(1, points - 2).Where(g => density[g] < density[g - 1] && density[g] <= density[g + 1]).ToList();
        var cuts = new List<double>();
        // Deepest first; each kept cut must leave real heaps either side of it among the cuts kept so far.
        foreach (int g in minima.OrderBy(g => Depth(density, g)))
        {
            if (cuts.Count == MaximumClasses - 1 || Depth(density, g) > MaximumValleyDepth)
            {
                break;
            }

            double cut = from + g * step;
            var candidate = cuts.Append(cut).Order().ToList();
            if (Heaps(logs, candidate).All(h => h >= MinimumClassProbes && h >= MinimumClassShare * logs.Length))
            {
                cuts = candidate;
            }
        }

        return cuts;
    }

    /// <summary>A valley's density against the lower of the highest peaks on either side of it (up to the next minimum).</summary>
    private static double Depth(double[] density, int valley)
    {
        double left = 0, right = 0;
        for (int g = valley - 1; g >= 0 && density[g] >= density[valley]; g--)
        {
            left = Math.Max(left, density[g]);
        }

        for (int g = valley + 1; g < density.Length && density[g] >= density[valley]; g++)
        {
            right = Math.Max(right, density[g]);
        }

        double lower = Math.Min(left, right);
        return lower > 0 ? density[valley] / lower : 1;
    }

    private static int[] Heaps(double[] logs, List<double> cuts)
    {
        var counts = new int[cuts.Count + 1];
        foreach (double v in logs)
        {
            counts[cuts.Count(c => v >= c)]++;
        }

        return counts;
    }

    private static List<PlacementClass> Build(double[] sorted, List<double> cuts)
    {
        string[] names = cuts.Count switch
        {
            0 => ["all"],
            1 => ["near", "far"],
            _ => ["near", "middle", "far"],
        };
        var classes = new List<PlacementClass>(names.Length);
        for (int i = 0; i <= cuts.Count; i++)
        {
            double low = i == 0 ? double.NegativeInfinity : Math.Exp(cuts[i - 1]);
            double high = i == cuts.Count ? double.PositiveInfinity : Math.Exp(cuts[i]);
            var members = sorted.Where(p => p >= low && p < high).ToArray();
            classes.Add(new PlacementClass(names[i], members[0], members[^1], members.Length, high));
        }

        return classes;
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
