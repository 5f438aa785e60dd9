using System.Globalization;

namespace IpcBench.Reports;

/// <summary>
/// One cell of two suites, metric by metric and placement class by placement class: the repetitions of each side that
/// ran in the class, their medians, and the rank test over them. The verdict waits for <see cref="Decide"/>, which
/// needs the p-value adjusted over the whole comparison.
/// </summary>
internal static class CellComparer
{
    /// <summary>
    /// Every metric of the cell, class by class. A flagged repetition (<see cref="RepetitionResult.Valid"/> false) stays
    /// in a test when the shift's interval with it lies beyond anything its flags can do (<see cref="FlagBounds"/>): the
    /// verdict stands, the flags named beside it. Otherwise it could explain the difference and is left out, which
    /// <see cref="CellTest.Costs"/> counts per flag.
    /// </summary>
    public static CellTest Test(ReportCell baseline, ReportCell candidate, PlacementStrata strata, int logicalCores)
    {
        var b = baseline.Repetitions.Where(r => r.Succeeded).ToList();
        var c = candidate.Repetitions.Where(r => r.Succeeded).ToList();
        var classes = b.Concat(c).Select(r => strata.ClassOf(r.ProbeNanoseconds)).Distinct().OrderBy(PlacementStrata.Rank).ToList();
        var changes = new List<MetricChange>(classes.Count * ReportMetrics.Compared.Count);
        var dropped = new HashSet<(bool Baseline, RepetitionResult Repetition)>();
        foreach (var placement in classes)
        {
            var bIn = b.Where(r => strata.ClassOf(r.ProbeNanoseconds) == placement).ToList();
            var cIn = c.Where(r => strata.ClassOf(r.ProbeNanoseconds) == placement).ToList();
            var flagged = bIn.Concat(cIn).Where(r => !r.Valid).ToList();
            foreach (var (metric, unit, higherIsBetter, read) in ReportMetrics.Compared.Select(m => (m.Id, m.Unit, m.HigherIsBetter!.Value, m.Read)))
            {
                var all = Test(metric, unit, higherIsBetter, placement, [.. bIn.Select(read)], [.. cIn.Select(read)]);
                if (flagged.Count == 0)
                {
                    changes.Add(all);
                    continue;
                }

                string named = Named(bIn, cIn);
                var factors = flagged.Select(r => FlagBounds.Factor(r, metric, logicalCores)).ToList();
                if (factors.All(f => f is not null) && factors.Max() is { } factor
                    && all is { Verdict: Verdict.Unspecified, ShiftCiLowPercent: { } low, ShiftCiHighPercent: { } high } && FlagBounds.Beyond(low, high, factor))
                {
                    changes.Add(all with
                    {
                        Note = string.Create(CultureInfo.InvariantCulture,
                            $"with flagged repetitions ({named}): the shift's interval lies beyond the {factor:0.##}x their flags can move {metric}"),
                    });
                    continue;
                }

                var bValid = bIn.Where(r => r.Valid).ToList();
                var cValid = cIn.Where(r => r.Valid).ToList();
                dropped.UnionWith(bIn.Where(r => !r.Valid).Select(r => (true, r)).Concat(cIn.Where(r => !r.Valid).Select(r => (false, r))));
                var valid = Test(metric, unit, higherIsBetter, placement, [.. bValid.Select(read)], [.. cValid.Select(read)]);
                string without = $"without flagged repetitions ({named}): their flags could explain a shift of this size";
                // A side whose every repetition in the class was flagged has none left: say so, not that it never ran there.
                // (A side that never ran in the class keeps that reason: the placements did not overlap.)
                string? emptied = bIn.Count == 0 || cIn.Count == 0 ? null : bValid.Count == 0 ? "baseline" : cValid.Count == 0 ? "candidate" : null;
                string note = valid.Verdict == Verdict.Unspecified ? without
                    : emptied is not null ? $"no valid {placement} repetition in the {emptied}: {without}"
                    : $"{valid.Note}; {without}";
                // The shift of the valid ones stays for the reader; without a p-value the comparison's correction leaves it out.
                changes.Add(valid with { Note = note });
            }
        }

        var costs = dropped.SelectMany(d => FlagBounds.Kinds(d.Repetition).Select(kind => (kind, d.Baseline)))
            .GroupBy(x => x.kind, StringComparer.Ordinal)
            .OrderBy(g => g.Key, StringComparer.Ordinal)
            .Select(g => new FlagCost(g.Key, g.Count(x => x.Baseline), g.Count(x => !x.Baseline)))
            .ToList();
        return new CellTest(changes, costs);
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

    /// <summary>Which repetitions of either side carry validity flags, e.g. "baseline round 2 (rate shortfall)".</summary>
    private static string Named(List<RepetitionResult> baseline, List<RepetitionResult> candidate)
    {
        static IEnumerable<string> Side(string name, List<RepetitionResult> repetitions) => repetitions.Where(r => !r.Valid).Select(r =>
            $"{name} round {r.Round} ({string.Join(", ", FlagBounds.Kinds(r).Select(k => k.Replace('_', ' ')))})");
        return string.Join("; ", Side("baseline", baseline).Concat(Side("candidate", candidate)));
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
        // What the test included or left out (flagged repetitions) stays beside the figures.
        note = tested.Note.Length > 0 ? $"{note}; {tested.Note}" : note;
        return tested with { Verdict = verdict, PValue = adjustedPValue, Note = note };
    }
}

/// <summary>A cell's metrics, and how many repetitions each validity flag cost it (left out of at least one test).</summary>
internal sealed record CellTest(List<MetricChange> Metrics, IReadOnlyList<FlagCost> Costs);

/// <summary>
/// How many repetitions of each side a validity flag (the proto's ValidityKind in snake case) cost a cell: left out of at
/// least one metric's test because the flag could explain the difference. A repetition with two flags counts under both.
/// </summary>
public sealed record FlagCost(string Kind, int Baseline, int Candidate)
{
    /// <summary>e.g. "placement moved: 2 + 1 repetitions (baseline + candidate)".</summary>
    public string Text => $"{Kind.Replace('_', ' ')}: {Baseline} + {Candidate} repetition{(Baseline + Candidate == 1 ? string.Empty : "s")} (baseline + candidate)";
}
