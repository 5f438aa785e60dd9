using System.Text.Json.Serialization;

namespace IpcBench.Daemon.Reports;

/// <summary>A comparison's outcome; the numbers are control.proto's ComparisonVerdict, so the edge casts.</summary>
public enum Verdict
{
    Unspecified = 0,
    Same = 1,
    Improved = 2,
    Regressed = 3,
}

/// <summary>One metric of a comparison: both figures, their ratio, the change and what it means.</summary>
public sealed record MetricChange(string Metric, string Unit, double Baseline, double Candidate, double Ratio, double ChangePercent, bool HigherIsBetter,
    Verdict Verdict)
{
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

    /// <summary>REGRESSED if any regressed; else IMPROVED if any improved; else SAME.</summary>
    public static Verdict Overall(IEnumerable<Verdict> verdicts)
    {
        var all = verdicts.ToList();
        return all.Contains(Verdict.Regressed) ? Verdict.Regressed : all.Contains(Verdict.Improved) ? Verdict.Improved : Verdict.Same;
    }
}

/// <summary>A cell present in both suites, compared on its medians; Unspecified when either side has no successful run.</summary>
public sealed record CellComparison(CellKey Key, [property: JsonIgnore] TimeSpan Duration, [property: JsonIgnore] TimeSpan Warmup,
    IReadOnlyList<MetricChange> Metrics, Verdict Verdict, IReadOnlyList<string> Notes)
{
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
    /// <summary>Cells matched by their key (transport, payload, shape), compared on their medians.</summary>
    public static SuiteComparison Compare(SuiteReport baseline, SuiteReport candidate, double thresholdPercent)
    {
        var notes = new List<string>();
        var cells = new List<CellComparison>();
        var candidates = candidate.Cells.GroupBy(c => c.Key).ToDictionary(g => g.Key, g => g.First());
        foreach (var cell in baseline.Cells)
        {
            if (!candidates.Remove(cell.Key, out var other))
            {
                notes.Add($"cell {cell.Key.Label} only in the baseline");
                continue;
            }

            cells.Add(CompareCell(cell, other, thresholdPercent));
        }

        notes.AddRange(candidates.Keys.Select(k => $"cell {k.Label} only in the candidate"));
        if (baseline.Environment with { BuildVersion = string.Empty } != candidate.Environment with { BuildVersion = string.Empty })
        {
            notes.Add($"environment differs: {Describe(baseline.Environment)} vs {Describe(candidate.Environment)}");
        }

        return new SuiteComparison(baseline.SuiteId, candidate.SuiteId, thresholdPercent, cells, MetricChange.Overall(cells.Select(c => c.Verdict)), notes);
    }

    private static CellComparison CompareCell(ReportCell baseline, ReportCell candidate, double threshold)
    {
        var b = baseline.Summary;
        var c = candidate.Summary;
        if (b.Repetitions == 0 || c.Repetitions == 0)
        {
            return new CellComparison(baseline.Key, baseline.Duration, baseline.Warmup, [], Verdict.Unspecified,
                [b.Repetitions == 0 ? "no successful repetition in the baseline" : "no successful repetition in the candidate"]);
        }

        MetricChange[] metrics =
        [
            MetricChange.Continuous("messages_per_second", "msg/s", b.MessagesPerSecond.Median, c.MessagesPerSecond.Median, higherIsBetter: true, threshold),
            MetricChange.Continuous("bytes_per_second", "B/s", b.BytesPerSecond.Median, c.BytesPerSecond.Median, higherIsBetter: true, threshold),
            MetricChange.Continuous("latency_p50", "ns", b.LatencyP50.Median, c.LatencyP50.Median, higherIsBetter: false, threshold),
            MetricChange.Continuous("latency_p99", "ns", b.LatencyP99.Median, c.LatencyP99.Median, higherIsBetter: false, threshold),
            MetricChange.Continuous("daemon_cpu_ns_per_message", "ns",
                b.CpuNanosecondsPerMessage(b.DaemonCpuPercent.Median), c.CpuNanosecondsPerMessage(c.DaemonCpuPercent.Median), higherIsBetter: false, threshold),
            MetricChange.Continuous("agents_cpu_ns_per_message", "ns",
                b.CpuNanosecondsPerMessage(b.AgentsCpuPercent.Median), c.CpuNanosecondsPerMessage(c.AgentsCpuPercent.Median), higherIsBetter: false, threshold),
        ];
        var notes = new List<string>();
        if (b.SpreadExceeded || c.SpreadExceeded)
        {
            notes.Add($"spread above {RepetitionStats.SpreadThresholdPercent:0} % (baseline {b.SpreadPercent:0.#} %, candidate {c.SpreadPercent:0.#} %): the verdict is less certain");
        }

        return new CellComparison(baseline.Key, baseline.Duration, baseline.Warmup, metrics, MetricChange.Overall(metrics.Select(m => m.Verdict)), notes);
    }

    /// <summary>Every field the environment check compares (the build aside), so the note shows what differed.</summary>
    private static string Describe(ReportEnvironment e) => $"{e.Hostname}, {e.CpuModel}, {e.LogicalCores} cores, {e.Os}, kernel {e.Kernel}, " +
        (e.DotnetVersion.StartsWith(".NET", StringComparison.Ordinal) ? e.DotnetVersion : ".NET " + e.DotnetVersion) +
        (e.CoreToCoreNanoseconds is { } ns ? $", core-to-core {ns:0} ns" : string.Empty);
}
