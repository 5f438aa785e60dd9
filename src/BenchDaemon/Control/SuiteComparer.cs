using IpcBench.Daemon.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// CompareSuites: cells matched by their key (transport, payload, shape), compared on their medians with
/// ScenarioComparer's metric rules; REGRESSED if any cell regressed, else IMPROVED if any improved, else SAME.
/// </summary>
public static class SuiteComparer
{
    public static CompareSuitesResponse Compare(SuiteReport baseline, SuiteReport candidate, double thresholdPercent)
    {
        var response = new CompareSuitesResponse { BaselineId = baseline.SuiteId, CandidateId = candidate.SuiteId, ThresholdPercent = thresholdPercent };
        var candidates = candidate.Cells.GroupBy(c => c.Key).ToDictionary(g => g.Key, g => g.First());
        foreach (var cell in baseline.Cells)
        {
            if (!candidates.Remove(cell.Key, out var other))
            {
                response.Notes.Add($"cell {cell.Key.Label} only in the baseline");
                continue;
            }

            response.Cells.Add(CompareCell(cell, other, thresholdPercent));
        }

        response.Notes.AddRange(candidates.Keys.Select(k => $"cell {k.Label} only in the candidate"));
        if (baseline.Environment with { BuildVersion = string.Empty } != candidate.Environment with { BuildVersion = string.Empty })
        {
            response.Notes.Add($"environment differs: {Describe(baseline.Environment)} vs {Describe(candidate.Environment)}");
        }

        response.Verdict = response.Cells.Any(c => c.Verdict == ComparisonVerdict.Regressed) ? ComparisonVerdict.Regressed
            : response.Cells.Any(c => c.Verdict == ComparisonVerdict.Improved) ? ComparisonVerdict.Improved
            : ComparisonVerdict.Same;
        return response;
    }

    private static SuiteCellComparison CompareCell(ReportCell baseline, ReportCell candidate, double threshold)
    {
        var b = baseline.Summary;
        var c = candidate.Summary;
        var comparison = new SuiteCellComparison { Spec = SuiteCells.ToSpec(baseline.Key, baseline.Duration, baseline.Warmup, 0, string.Empty) };
        if (b.Repetitions == 0 || c.Repetitions == 0)
        {
            comparison.Verdict = ComparisonVerdict.Unspecified;
            comparison.Notes.Add(b.Repetitions == 0 ? "no successful repetition in the baseline" : "no successful repetition in the candidate");
            return comparison;
        }

        comparison.Metrics.Add(ScenarioComparer.Continuous("messages_per_second", "msg/s", b.MessagesPerSecond.Median, c.MessagesPerSecond.Median, higherIsBetter: true, threshold));
        comparison.Metrics.Add(ScenarioComparer.Continuous("bytes_per_second", "B/s", b.BytesPerSecond.Median, c.BytesPerSecond.Median, higherIsBetter: true, threshold));
        comparison.Metrics.Add(ScenarioComparer.Continuous("latency_p50", "ns", b.LatencyP50.Median, c.LatencyP50.Median, higherIsBetter: false, threshold));
        comparison.Metrics.Add(ScenarioComparer.Continuous("latency_p99", "ns", b.LatencyP99.Median, c.LatencyP99.Median, higherIsBetter: false, threshold));
        comparison.Metrics.Add(ScenarioComparer.Continuous("daemon_cpu_ns_per_message", "ns",
            b.CpuNanosecondsPerMessage(b.DaemonCpuPercent.Median), c.CpuNanosecondsPerMessage(c.DaemonCpuPercent.Median), higherIsBetter: false, threshold));
        comparison.Metrics.Add(ScenarioComparer.Continuous("agents_cpu_ns_per_message", "ns",
            b.CpuNanosecondsPerMessage(b.AgentsCpuPercent.Median), c.CpuNanosecondsPerMessage(c.AgentsCpuPercent.Median), higherIsBetter: false, threshold));
        comparison.Verdict = comparison.Metrics.Any(m => m.Verdict == ComparisonVerdict.Regressed) ? ComparisonVerdict.Regressed
            : comparison.Metrics.Any(m => m.Verdict == ComparisonVerdict.Improved) ? ComparisonVerdict.Improved
            : ComparisonVerdict.Same;
        if (b.SpreadExceeded || c.SpreadExceeded)
        {
            comparison.Notes.Add($"spread above {RepetitionStats.SpreadThresholdPercent:0} % (baseline {b.SpreadPercent:0.#} %, candidate {c.SpreadPercent:0.#} %): the verdict is less certain");
        }

        return comparison;
    }

    private static string Describe(ReportEnvironment e) => $"{e.Hostname}, {e.CpuModel}, {e.LogicalCores} cores, kernel {e.Kernel}, .NET {e.DotnetVersion}";
}
