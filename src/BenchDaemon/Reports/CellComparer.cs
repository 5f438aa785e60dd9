using System.Globalization;

namespace IpcBench.Daemon.Reports;

/// <summary>
/// One cell of two suites, metric by metric and placement class by placement class: the repetitions of each side that
/// ran in the class, their medians, and the rank test over them. The verdict waits for <see cref="Decide"/>, which
/// needs the p-value adjusted over the whole comparison.
/// </summary>
internal static class CellComparer
{
    private static readonly (string Metric, string Unit, bool HigherIsBetter, Func<RepetitionResult, double> Read)[] Metrics =
    [
        ("messages_per_second", "msg/s", true, r => r.MessagesPerSecond),
        ("bytes_per_second", "B/s", true, r => r.BytesPerSecond),
        ("latency_p50", "ns", false, r => r.Latency.P50),
        ("latency_p99", "ns", false, r => r.Latency.P99),
        ("daemon_cpu_ns_per_message", "ns", false, r => RepetitionStats.CpuNanosecondsPerMessage(r.DaemonCpuPercent, r.MessagesPerSecond)),
        ("agents_cpu_ns_per_message", "ns", false, r => RepetitionStats.CpuNanosecondsPerMessage(r.AgentsCpuPercent, r.MessagesPerSecond)),
    ];

    public static List<MetricChange> Test(ReportCell baseline, ReportCell candidate, PlacementStrata strata)
    {
        var b = baseline.Repetitions.Where(r => r.Succeeded).ToList();
        var c = candidate.Repetitions.Where(r => r.Succeeded).ToList();
        var classes = b.Concat(c).Select(r => strata.ClassOf(r.ProbeNanoseconds)).Distinct().OrderBy(PlacementStrata.Rank).ToList();
        var changes = new List<MetricChange>(classes.Count * Metrics.Length);
        foreach (var placement in classes)
        {
            var bIn = b.Where(r => strata.ClassOf(r.ProbeNanoseconds) == placement).ToList();
            var cIn = c.Where(r => strata.ClassOf(r.ProbeNanoseconds) == placement).ToList();
            string? invalid = InvalidNote(bIn, cIn);
            foreach (var (metric, unit, higherIsBetter, read) in Metrics)
            {
                var change = Test(metric, unit, higherIsBetter, placement, [.. bIn.Select(read)], [.. cIn.Select(read)]);
                // The shift stays for the reader; without a p-value the comparison's correction leaves it out and no
                // verdict is drawn from figures that measured something other than the spec.
                changes.Add(invalid is null ? change : change with
                {
                    Verdict = Verdict.Inconclusive,
                    PValue = null,
                    Note = change.Verdict == Verdict.Inconclusive ? $"{change.Note}; {invalid}" : invalid,
                });
            }
        }

        return changes;
    }

    private static MetricChange Test(string metric, string unit, bool higherIsBetter, string placement, double[] baseline, double[] candidate)
    {
        // Ratio and change of the medians, for the tables; the verdict is the test's.
        var medians = MetricChange.Continuous(metric, unit, Spread.Of(baseline).Median, Spread.Of(candidate).Median, higherIsBetter, thresholdPercent: 0) with
        {
            Placement = placement,
            BaselineSamples = baseline.Length,
            CandidateSamples = candidate.Length,
        };
        if (baseline.Length == 0 || candidate.Length == 0)
        {
            return medians with
            {
                Verdict = Verdict.Inconclusive,
                Note = $"no {placement} repetition in the {(baseline.Length == 0 ? "baseline" : "candidate")}: placements did not overlap",
            };
        }

        if (!ShiftTest.CanBeSignificant(baseline.Length, candidate.Length))
        {
            return medians with
            {
                Verdict = Verdict.Inconclusive,
                Note = $"{baseline.Length} against {candidate.Length} repetitions: no outcome could reach p ≤ {ShiftTest.Alpha:0.##}; " +
                    $"{ShiftTest.MinimumRepetitions} or more a side are needed",
            };
        }

        var shift = ShiftTest.Estimate(baseline, candidate);
        return medians with
        {
            Verdict = Verdict.Unspecified,
            PValue = shift.PValue,
            ShiftPercent = shift.ShiftPercent,
            ShiftCiLowPercent = shift.CiLowPercent,
            ShiftCiHighPercent = shift.CiHighPercent,
        };
    }

    /// <summary>Which repetitions of either side carry validity issues, e.g. "invalid repetitions: baseline round 2 (rate shortfall)".</summary>
    private static string? InvalidNote(List<RepetitionResult> baseline, List<RepetitionResult> candidate)
    {
        static IEnumerable<string> Side(string name, List<RepetitionResult> repetitions) => repetitions.Where(r => !r.Valid).Select(r =>
            $"{name} round {r.Round} ({string.Join(", ", r.Validity!.Select(v => v.Kind.Replace('_', ' ')).Distinct())})");
        var invalid = Side("baseline", baseline).Concat(Side("candidate", candidate)).ToList();
        return invalid.Count == 0 ? null : "invalid repetitions: " + string.Join("; ", invalid) + "; a verdict needs valid ones";
    }

    /// <summary>
    /// The verdict of a tested metric, from its p-value adjusted over the comparison: changed only when significant and
    /// shifted beyond the threshold (the smallest change of interest) with its whole confidence interval, in the
    /// direction that makes it better or worse. The interval, not the point estimate: a same-build comparison whose
    /// shift lands at 5.2 % with an interval reaching 3 % has not shown a change of 5 % (measured: 2 of 30 cells of five
    /// self-comparisons flipped on point estimates, none on intervals).
    /// </summary>
    public static MetricChange Decide(MetricChange tested, double adjustedPValue, double thresholdPercent)
    {
        double shift = tested.ShiftPercent ?? 0;
        bool significant = adjustedPValue <= ShiftTest.Alpha;
        // The interval's bound nearest no change; rounded, so a bound of exactly the threshold does not tip over on the
        // last bit of a double.
        double nearest = shift > 0 ? tested.ShiftCiLowPercent ?? shift : tested.ShiftCiHighPercent ?? shift;
        bool beyond = Math.Sign(nearest) == Math.Sign(shift) && Math.Abs(Math.Round(nearest, 9)) > thresholdPercent;
        var verdict = !(significant && beyond) ? Verdict.Same
            : (shift > 0) == tested.HigherIsBetter ? Verdict.Improved : Verdict.Regressed;
        string why = verdict != Verdict.Same ? string.Empty
            : significant ? string.Create(CultureInfo.InvariantCulture, $": significant, but the interval reaches within ±{thresholdPercent:0.#} %") : ": not significant";
        string note = string.Create(CultureInfo.InvariantCulture,
            $"p = {adjustedPValue:0.####} (adjusted for the comparison's tests); shift {shift:+0.0;−0.0;0.0} % [{tested.ShiftCiLowPercent:+0.0;−0.0;0.0}, {tested.ShiftCiHighPercent:+0.0;−0.0;0.0}] at 95 %{why}");
        return tested with { Verdict = verdict, PValue = adjustedPValue, Note = note };
    }
}
