namespace IpcBench.Reports;

/// <summary>
/// How far a validity flag can have moved a repetition's figures, so a comparison charges the flag a repetition only
/// when it could explain the difference (issue 34: a −98 % drop got no verdict because the baseline's repetitions
/// carried `placement moved` and `noise above limit`, neither of which can do −98 %). Each bound is a factor either way:
/// a flagged repetition's figure may be up to that many times above or below what an unflagged one would have shown.
/// </summary>
public static class FlagBounds
{
    /// <summary>
    /// `placement moved`: on these hosts near against far moves small-message figures 2–4x (msg/s, latency, CPU per
    /// message alike; the probe itself ~10x from 50 to 1000 ns); 10x is the most a move between placements can do.
    /// </summary>
    public const double PlacementFactor = 10;

    /// <summary>
    /// `noise above limit` takes a share of the machine; at worst all of it from one hot thread, which then loses
    /// noise × cores of its time. Beyond this share of a thread's time the bound is none: the thread barely ran.
    /// </summary>
    public const double MaximumNoiseThreadShare = 0.9;

    /// <summary>
    /// The factor every flag of <paramref name="repetition"/> together can have moved <paramref name="metric"/> by, or
    /// null when some flag can move it by anything: rate shortfall, receivers behind and sender lag make the figures
    /// measure something else; noise moves tails and CPU per message without bound (a descheduled moment is a tail of
    /// any length), and an unknown noise figure bounds nothing.
    /// </summary>
    public static double? Factor(RepetitionResult repetition, string metric, int logicalCores)
    {
        double factor = 1;
        foreach (var kind in Kinds(repetition))
        {
            double? one = kind switch
            {
                PlacementMoved => PlacementFactor,
                NoiseAboveLimit when ThroughputMetrics.Contains(metric) => NoiseFactor(repetition.NoisePercent, logicalCores),
                _ => null,
            };
            if (one is not { } f)
            {
                return null;
            }

            factor *= f;
        }

        return factor;
    }

    /// <summary>The flags of a repetition, as the proto's ValidityKind in snake case, each once.</summary>
    public static IEnumerable<string> Kinds(RepetitionResult repetition) => (repetition.Validity ?? []).Select(v => v.Kind).Distinct();

    /// <summary>Whether a shift's interval (percent of the baseline) lies wholly beyond <paramref name="factor"/> either way.</summary>
    public static bool Beyond(double ciLowPercent, double ciHighPercent, double factor) =>
        ciHighPercent <= (1 / factor - 1) * 100 || ciLowPercent >= (factor - 1) * 100;

    public const string PlacementMoved = "placement_moved";
    public const string NoiseAboveLimit = "noise_above_limit";

    /// <summary>The metrics noise moves only by the time it takes from a thread: how much work got done per second.</summary>
    private static readonly HashSet<string> ThroughputMetrics = new(StringComparer.Ordinal) { "messages_per_second", "bytes_per_second" };

    private static double? NoiseFactor(double? noisePercent, int logicalCores)
    {
        if (noisePercent is not { } noise)
        {
            return null;
        }

        double share = noise / 100 * Math.Max(1, logicalCores);
        return share >= MaximumNoiseThreadShare ? null : 1 / (1 - share);
    }
}
