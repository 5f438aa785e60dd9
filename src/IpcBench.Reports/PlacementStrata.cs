namespace IpcBench.Reports;

/// <summary>
/// Where the vCPUs sat for each repetition, as classes of its core-to-core probe. The host moves the two vCPUs between
/// cores that share a cache ("near", a probe of ~70–150 ns) and cores that do not ("far", ~450–650 ns) within minutes,
/// and small-message figures move 2–4x with it: a comparison compares near with near and far with far. The classes are
/// found in the probes themselves, both sides pooled: split at their widest gap when that gap is at least
/// <see cref="MinimumGapRatio"/>x, else one class.
/// </summary>
public sealed record PlacementStrata(double? BoundaryNanoseconds, bool Unsplit = false)
{
    /// <summary>
    /// Every repetition in one class: when one side has no probe at all (a report.json written before repetitions
    /// carried theirs, or threads pinned to one CPU), so that side cannot be placed and is compared with all of the other.
    /// </summary>
    public static readonly PlacementStrata None = new(null, Unsplit: true);

    /// <summary>The one ratio that tells placements apart in a comparison (the daemon's own check learns classes instead, once it can).</summary>
    public const double MinimumGapRatio = IpcBench.Workload.CoreToCoreProbe.PlacementGapRatio;

    public const string Near = "near";
    public const string Far = "far";

    /// <summary>One class: the probes did not split (or there were none).</summary>
    public const string All = "all";

    /// <summary>A repetition without a probe (an older result, or a machine where the probe could not run).</summary>
    public const string Unknown = "unknown";

    /// <summary>The order classes are listed in: near, far, all, unknown.</summary>
    public static int Rank(string placement) => placement switch
    {
        Near => 0,
        Far => 1,
        All => 2,
        _ => 3,
    };

    public static PlacementStrata Of(IEnumerable<double?> probes)
    {
        var sorted = probes.OfType<double>().Where(p => p > 0).Order().ToArray();
        double widest = 1;
        double? boundary = null;
        for (int i = 0; i + 1 < sorted.Length; i++)
        {
            double ratio = sorted[i + 1] / sorted[i];
            if (ratio > widest)
            {
                widest = ratio;
                boundary = Math.Sqrt(sorted[i] * sorted[i + 1]);
            }
        }

        return new PlacementStrata(widest >= MinimumGapRatio ? boundary : null);
    }

    public string ClassOf(double? probeNanoseconds) =>
        Unsplit ? All
        : probeNanoseconds is not > 0 ? Unknown
        : BoundaryNanoseconds is not { } boundary ? All
        : probeNanoseconds <= boundary ? Near : Far;

    /// <summary>For notes: how the classes were drawn.</summary>
    public string Describe() => Unsplit
        ? "placements not separated: one side has no core-to-core probes (a report from before repetitions kept theirs, or " +
            "publisher and subscriber pinned to one CPU, where there is no pair of cores to probe)"
        : BoundaryNanoseconds is { } boundary
        ? $"placement classes by core-to-core probe: near up to {boundary:0} ns, far above (the widest gap in the probes, {MinimumGapRatio:0}x or more)"
        : $"one placement class: the probes had no gap of {MinimumGapRatio:0}x or more";
}
