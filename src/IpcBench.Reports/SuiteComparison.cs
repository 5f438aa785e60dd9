using System.Text.Json.Serialization;

namespace IpcBench.Reports;

/// <summary>A comparison's outcome; the numbers are control.proto's ComparisonVerdict, so the edge casts.</summary>
public enum Verdict
{
    Unspecified = 0,
    Same = 1,
    Improved = 2,
    Regressed = 3,

    /// <summary>The data cannot tell: too few repetitions for a rank test, or no repetition in a placement on one side.</summary>
    Inconclusive = 4,
}

/// <summary>
/// One metric of a comparison: both figures, their ratio, the change and what it means. Between suites, per placement
/// class, with the rank test behind the verdict (<see cref="ShiftTest"/>): null where no test was made.
/// </summary>
public sealed record MetricChange(string Metric, string Unit, double Baseline, double Candidate, double Ratio, double ChangePercent, bool HigherIsBetter,
    Verdict Verdict)
{
    /// <summary>The placement class the repetitions compared ran in (<see cref="PlacementStrata"/>); empty between two scenarios.</summary>
    public string Placement { get; init; } = string.Empty;

    /// <summary>The rank test's two-sided p-value, adjusted for the number of tests in the comparison.</summary>
    public double? PValue { get; init; }

    public double? ShiftPercent { get; init; }

    public double? ShiftCiLowPercent { get; init; }

    public double? ShiftCiHighPercent { get; init; }

    public int BaselineSamples { get; init; }

    public int CandidateSamples { get; init; }

    /// <summary>What the verdict rests on, or why there is none.</summary>
    public string Note { get; init; } = string.Empty;

    /// <summary>
    /// The ratio-and-threshold rule CompareScenarios and CompareSuites share. When the baseline is 0 the ratio is 1
    /// (both 0) or +Infinity, and any candidate above 0 counts as a change beyond every threshold.
    /// </summary>
    public static MetricChange Continuous(string metric, string unit, double baseline, double candidate, bool higherIsBetter, double thresholdPercent)
    {
        double ratio = baseline != 0 ? candidate / baseline : candidate == 0 ? 1 : double.PositiveInfinity;
        double change = baseline != 0 ? (candidate - baseline) / baseline * 100 : (ratio - 1) * 100;
        // Rounded for the verdict: a change of exactly the threshold must not tip over on the last bit of a double.
        double rounded = Math.Round(change, 9);
        var verdict = Verdict.Same;
        if (rounded > thresholdPercent)
        {
            verdict = higherIsBetter ? Verdict.Improved : Verdict.Regressed;
        }
        else if (rounded < -thresholdPercent)
        {
            verdict = higherIsBetter ? Verdict.Regressed : Verdict.Improved;
        }

        return new MetricChange(metric, unit, baseline, candidate, ratio, change, higherIsBetter, verdict);
    }

    /// <summary>REGRESSED if any regressed; else IMPROVED if any improved; else INCONCLUSIVE if any was; else SAME.</summary>
    public static Verdict Overall(IEnumerable<Verdict> verdicts)
    {
        var all = verdicts.ToList();
        return all.Contains(Verdict.Regressed) ? Verdict.Regressed : all.Contains(Verdict.Improved) ? Verdict.Improved
            : all.Contains(Verdict.Inconclusive) ? Verdict.Inconclusive : Verdict.Same;
    }
}

/// <summary>
/// A cell present in both suites: its metrics per placement class (medians and rank tests); Unspecified when either side
/// has no successful run.
/// </summary>
public sealed record CellComparison(CellKey Key, [property: JsonIgnore] TimeSpan Duration, [property: JsonIgnore] TimeSpan Warmup,
    IReadOnlyList<MetricChange> Metrics, Verdict Verdict, IReadOnlyList<string> Notes)
{
    /// <summary>How many repetitions each validity flag cost the cell (<see cref="FlagCost"/>); empty when none did.</summary>
    public IReadOnlyList<FlagCost> FlagCosts { get; init; } = [];

    public string Label => Key.Label;

    [JsonIgnore]
    public MetricChange? MessagesPerSecond => Metrics.FirstOrDefault(m => m.Metric == "messages_per_second");

    [JsonIgnore]
    public MetricChange? LatencyP99 => Metrics.FirstOrDefault(m => m.Metric == "latency_p99");
}

/// <summary>
/// CompareSuites' answer in the report's own terms: what the CompareSuites RPC returns (Control/SuiteComparer maps it
/// to proto) and what a report with a baseline renders, so both show the same verdicts.
/// </summary>
public sealed record SuiteComparison(string BaselineId, string CandidateId, double ThresholdPercent, IReadOnlyList<CellComparison> Cells, Verdict Verdict,
    IReadOnlyList<string> Notes)
{
    /// <summary>
    /// Cells matched by their key (transport, payload, shape), each metric compared per placement class with a rank test
    /// (<see cref="CellComparer"/>); the p-values adjusted over every test of the comparison.
    /// </summary>
    public static SuiteComparison Compare(SuiteReport baseline, SuiteReport candidate, double thresholdPercent)
    {
        var notes = new List<string>();
        var pairs = new List<(ReportCell Baseline, ReportCell Candidate)>();
        var candidates = candidate.Cells.GroupBy(c => c.Key).ToDictionary(g => g.Key, g => g.First());
        foreach (var cell in baseline.Cells)
        {
            if (!candidates.Remove(cell.Key, out var other))
            {
                notes.Add($"cell {cell.Key.Label} only in the baseline");
                continue;
            }

            pairs.Add((cell, other));
        }

        notes.AddRange(candidates.Keys.Select(k => $"cell {k.Label} only in the candidate"));
        // The probe is left out: it moves with the placement between any two suites, and the placement classes below
        // take it into account repetition by repetition. So is the clock read's cost, a few ns apart run to run (the
        // clocksource itself is compared).
        if (baseline.Environment.Machine() != candidate.Environment.Machine())
        {
            notes.Add($"environment differs: {Describe(baseline.Environment)} vs {Describe(candidate.Environment)}");
        }

        var repetitions = pairs.SelectMany(p => p.Baseline.Repetitions.Concat(p.Candidate.Repetitions)).Where(r => r.Succeeded).ToList();
        bool Probed(Func<(ReportCell Baseline, ReportCell Candidate), ReportCell> side) =>
            pairs.Any(p => side(p).Repetitions.Any(r => r.ProbeNanoseconds is > 0));
        var strata = Probed(p => p.Baseline) != Probed(p => p.Candidate) ? PlacementStrata.None
            : PlacementStrata.Of(repetitions.Select(r => r.ProbeNanoseconds));
        if (repetitions.Any(r => r.ProbeNanoseconds is > 0))
        {
            notes.Add(strata.Describe());
        }

        if (candidate.Environment.PlacementClasses.Length > 0)
        {
            // What the daemon's own placement check (placement moved) used, beside the strata of the probes compared here.
            notes.Add($"placement classes the daemon learned: {candidate.Environment.PlacementClasses}");
        }

        int cores = candidate.Environment.LogicalCores;
        var tested = pairs.Select(p => Testable(p.Baseline, p.Candidate) ? CellComparer.Test(p.Baseline, p.Candidate, strata, cores) : null).ToList();
        var withP = tested.OfType<CellTest>().SelectMany(t => t.Metrics).Where(m => m.PValue is not null).ToList();
        var adjusted = ShiftTest.AdjustForMultipleTests([.. withP.Select(m => m.PValue!.Value)]);
        var decided = new Dictionary<MetricChange, MetricChange>(ReferenceEqualityComparer.Instance);
        for (int i = 0; i < withP.Count; i++)
        {
            decided[withP[i]] = CellComparer.Decide(withP[i], adjusted[i], thresholdPercent);
        }

        var cells = pairs.Select((pair, i) => tested[i] is { } test
            ? Cell(pair.Baseline, pair.Candidate, [.. test.Metrics.Select(m => decided.TryGetValue(m, out var d) ? d : m)], test.Costs)
            : Untested(pair.Baseline)).ToList();
        return new SuiteComparison(baseline.SuiteId, candidate.SuiteId, thresholdPercent, cells, MetricChange.Overall(cells.Select(c => c.Verdict)), notes);

        CellComparison Untested(ReportCell cell) => new(cell.Key, cell.Duration, cell.Warmup, [], Verdict.Unspecified,
            [cell.Summary.Repetitions == 0 ? "no successful repetition in the baseline" : "no successful repetition in the candidate"]);
    }

    private static bool Testable(ReportCell baseline, ReportCell candidate) => baseline.Summary.Repetitions > 0 && candidate.Summary.Repetitions > 0;

    private static CellComparison Cell(ReportCell baseline, ReportCell candidate, IReadOnlyList<MetricChange> metrics, IReadOnlyList<FlagCost> costs)
    {
        var b = baseline.Summary;
        var c = candidate.Summary;
        var notes = new List<string>();
        if (b.SpreadExceeded || c.SpreadExceeded)
        {
            notes.Add($"spread above {RepetitionStats.SpreadThresholdPercent:0} % (baseline {b.SpreadPercent:0.#} %, candidate {c.SpreadPercent:0.#} %): " +
                "the medians move with it; the verdicts rest on the rank tests");
        }

        if (costs.Count > 0)
        {
            // Every renderer shows a cell's notes: the count reaches Markdown, HTML, CSV and the RPC's notes alike.
            notes.Add("repetitions the validity flags cost (left out where they could explain the difference): " + string.Join("; ", costs.Select(c => c.Text)));
        }

        return new CellComparison(baseline.Key, baseline.Duration, baseline.Warmup, metrics, MetricChange.Overall(metrics.Select(m => m.Verdict)), notes)
        {
            FlagCosts = costs,
        };
    }

    /// <summary>Every field the environment check compares (the build aside), so the note shows what differed.</summary>
    private static string Describe(ReportEnvironment e) => $"{e.Hostname}, {e.CpuModel}, {e.LogicalCores} cores, {e.Os}, kernel {e.Kernel}, " +
        (e.DotnetVersion.StartsWith(".NET", StringComparison.Ordinal) ? e.DotnetVersion : ".NET " + e.DotnetVersion) +
        (e.CoreToCoreNanoseconds is { } ns ? $", core-to-core {ns:0} ns" : string.Empty) +
        (e.ClockSource.Length > 0 ? $", clock {e.ClockSource}" : string.Empty);
}
