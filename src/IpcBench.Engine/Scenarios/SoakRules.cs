using System.Globalization;
using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// When a soak is holding, drifting, leaking or losing: every bound of the judgement, once. A trend counts only when its
/// 95 % interval excludes zero and its size passes the bound, so a noisy series with no direction is never a verdict.
/// A rate-limited scenario falls behind by the measured window's own rule (<see cref="ValidityRules.MinimumDeliveredShare"/>).
/// </summary>
internal static class SoakRules
{
    /// <summary>Points (of IpcBench:SoakPointSeconds each) before any trend is judged.</summary>
    public const int MinimumPoints = 6;

    /// <summary>Throughput drifts when the fitted line moves by more than this share of its mean over the span.</summary>
    public const double ThroughputDriftShare = 0.10;

    /// <summary>Latency drifts when the fitted p99 rises by more than this share of its mean over the span.</summary>
    public const double LatencyDriftShare = 0.5;

    private const double MiB = 1024 * 1024;

    /// <summary>
    /// A resource leaks when its slope's 95 % interval lies wholly above <c>PerHour</c> and, over its span, above
    /// <c>Floor</c> (a leak at least that large, not only a slope above zero): the floor keeps a process's first minutes (JIT, pools and buffers filled
    /// once) from reading as a leak, the rate keeps a slow but real creep over hours from hiding under the floor.
    /// </summary>
    public static (double PerHour, double Floor) LeakBound(ProcessResource resource) => resource switch
    {
        ProcessResource.Threads => (4, 4),
        ProcessResource.Descriptors => (8, 8),
        _ => (16 * MiB, 8 * MiB),
    };

    /// <summary>
    /// Whether a resource's growth is a leak. RSS is the sum of three owners, each judged on its own: the collector
    /// (by its live heap after a gen2 collection, not by what it has committed, which follows its own budgets and
    /// holds dead objects until a gen2 runs), shared mappings, and native memory (what is left). RSS itself and the
    /// collector's committed memory are shown, not judged: in a soak of this daemon (2026-11-27) the heap after its last
    /// collection rose 45 → 50 MiB and its committed memory 48 → 57 MiB in eight minutes while the live heap two forced
    /// full collections found was 36.8 and 37.1 MiB.
    /// </summary>
    public static bool IsJudged(ProcessResource resource) => resource is not (ProcessResource.RssBytes or ProcessResource.GcCommittedBytes);

    /// <summary>The verdict and every reason for it; <see cref="SoakStatus.Judging"/> below <see cref="MinimumPoints"/>.</summary>
    public static (SoakStatus Verdict, IReadOnlyList<string> Reasons) Judge(SoakEvidence evidence)
    {
        var losing = new List<string>();
        var leaking = new List<string>();
        var drifting = new List<string>();
        if (evidence.Lost + evidence.Duplicated + evidence.Corrupted > 0)
        {
            losing.Add(string.Create(CultureInfo.InvariantCulture,
                $"{evidence.Lost} lost, {evidence.Duplicated} duplicated, {evidence.Corrupted} corrupted"));
        }

        if (evidence.Points < MinimumPoints)
        {
            return losing.Count > 0 ? (SoakStatus.Losing, losing) : (SoakStatus.Judging, [$"judged from {MinimumPoints} points on; {evidence.Points} so far"]);
        }

        foreach (var (name, slope) in Both("throughput", evidence.Throughput))
        {
            if (slope.ExcludesZero && slope.Mean > 0 && Math.Abs(slope.Change) > ThroughputDriftShare * slope.Mean)
            {
                drifting.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{name} {(slope.Change > 0 ? "rose" : "fell")} {Math.Abs(slope.Change) / slope.Mean:P0} over {Span(slope)} ({slope.PerHour:F0} msg/s per hour, 95 % [{slope.LowPerHour:F0}, {slope.HighPerHour:F0}])"));
            }
        }

        foreach (var (name, slope) in Both("latency p99", evidence.LatencyP99Ns))
        {
            if (slope.LowPerHour > 0 && slope.Mean > 0 && slope.Change > LatencyDriftShare * slope.Mean)
            {
                drifting.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{name} rose {slope.Change / slope.Mean:P0} over {Span(slope)} ({slope.PerHour / 1000:F1} µs per hour, 95 % [{slope.LowPerHour / 1000:F1}, {slope.HighPerHour / 1000:F1}])"));
            }
        }

        if (evidence.OfferedPerSecond > 0 && evidence.LastWindowPerSecond is { } delivered && delivered < ValidityRules.MinimumDeliveredShare * evidence.OfferedPerSecond)
        {
            drifting.Add(string.Create(CultureInfo.InvariantCulture,
                $"delivers {delivered:F0} msg/s of the {evidence.OfferedPerSecond:F0} offered ({delivered / evidence.OfferedPerSecond:P0}) over the last window"));
        }

        foreach (var process in evidence.Processes)
        {
            foreach (var resource in process.Resources.Where(r => IsJudged(r.Resource)))
            {
                var (perHour, floor) = LeakBound(resource.Resource);
                if (!StillGrowing(resource.Trend.Recent))
                {
                    continue;
                }

                foreach (var (name, slope) in Both(Describe(process, resource.Resource), resource.Trend))
                {
                    // The interval's low end must pass both bounds: judged every point for hours, a fit whose interval
                    // merely excludes zero would sooner or later call a noisy heap a leak.
                    if (slope.LowPerHour >= perHour && slope.LowPerHour * slope.Span.TotalHours >= floor)
                    {
                        var recent = resource.Trend.Recent!;
                        leaking.Add(string.Create(CultureInfo.InvariantCulture,
                            $"{name} grew {Amount(resource.Resource, slope.Change)} over {Span(slope)} ({Amount(resource.Resource, slope.PerHour)} per hour, 95 % [{Amount(resource.Resource, slope.LowPerHour)}, {Amount(resource.Resource, slope.HighPerHour)}]) and still grows ({Amount(resource.Resource, recent.PerHour)} per hour over the last {Span(recent)})"));
                    }
                }
            }
        }

        var verdict = losing.Count > 0 ? SoakStatus.Losing
            : leaking.Count > 0 ? SoakStatus.Leaking
            : drifting.Count > 0 ? SoakStatus.Drifting
            : SoakStatus.Holding;
        return (verdict, [.. losing, .. leaking, .. drifting]);
    }

    /// <summary>
    /// A leak goes on: growth over the span counts only while the latest third of the window's points still rises (its
    /// interval wholly above zero). A step that has levelled off is a process sizing itself once, not a leak: in a soak
    /// of three transports on one daemon (2026-11-27) its resident memory rose 25 MiB in one step 33 minutes in, all of it
    /// in the collector's regions, and then stayed within 0.2 MiB for 15 minutes; a line over the span read 39 MiB an hour.
    /// </summary>
    private static bool StillGrowing(TrendSlope? recent) => recent is { LowPerHour: > 0 };

    /// <summary>A series' since-start and last-window slopes that exist, named; the window only once it differs from the start.</summary>
    private static IEnumerable<(string Name, TrendSlope Slope)> Both(string name, TrendPair trend)
    {
        if (trend.SinceStart is { } all)
        {
            yield return (name + " since the start", all);
        }

        if (trend.LastWindow is { } window && (trend.SinceStart is null || window.Points < trend.SinceStart.Points))
        {
            yield return (name + " over the last window", window);
        }
    }

    private static string Describe(ProcessTrends process, ProcessResource resource)
    {
        string who = process.Index < 0 ? process.Role : $"{process.Role} {process.Index}";
        string what = resource switch
        {
            ProcessResource.ManagedHeapBytes => "managed heap",
            ProcessResource.RssBytes => "resident memory",
            ProcessResource.SharedMemoryBytes => "shared memory",
            ProcessResource.GcCommittedBytes => "GC-committed memory",
            ProcessResource.NativeBytes => "native memory",
            ProcessResource.Threads => "threads",
            _ => "descriptors",
        };
        return $"{who}'s {what}";
    }

    private static string Amount(ProcessResource resource, double value) => resource is ProcessResource.Threads or ProcessResource.Descriptors
        ? value.ToString("F1", CultureInfo.InvariantCulture)
        : (value / MiB).ToString("F1", CultureInfo.InvariantCulture) + " MiB";

    private static string Span(TrendSlope slope) => slope.Span.TotalMinutes >= 90
        ? slope.Span.TotalHours.ToString("F1", CultureInfo.InvariantCulture) + " h"
        : slope.Span.TotalSeconds >= 120 ? slope.Span.TotalMinutes.ToString("F0", CultureInfo.InvariantCulture) + " min"
        : slope.Span.TotalSeconds.ToString("F0", CultureInfo.InvariantCulture) + " s";
}

/// <summary>What <see cref="SoakRules.Judge"/> judges: counters since the start, the trends, the offered rate (0 in closed loop).</summary>
internal sealed record SoakEvidence(
    long Lost,
    long Duplicated,
    long Corrupted,
    int Points,
    TrendPair Throughput,
    TrendPair LatencyP99Ns,
    double OfferedPerSecond,
    double? LastWindowPerSecond,
    IReadOnlyList<ProcessTrends> Processes);
