using System.Globalization;

namespace IpcBench.Reports;

/// <summary>Numbers as every renderer prints them: invariant culture, SI-style K/M, bytes in binary units.</summary>
public static class ReportFormatting
{
    public static string Bytes(int bytes) => bytes switch
    {
        >= 1024 * 1024 when bytes % (1024 * 1024) == 0 => $"{bytes / (1024 * 1024)} MB",
        >= 1024 when bytes % 1024 == 0 => $"{bytes / 1024} KB",
        _ => $"{bytes} B",
    };

    public static string Count(double value) => value switch
    {
        >= 1e6 => (value / 1e6).ToString("0.00", CultureInfo.InvariantCulture) + " M",
        >= 1e3 => (value / 1e3).ToString("0.0", CultureInfo.InvariantCulture) + " K",
        _ => value.ToString("0", CultureInfo.InvariantCulture),
    };

    public static string Megabytes(double bytesPerSecond) => (bytesPerSecond / 1e6).ToString("0.#", CultureInfo.InvariantCulture);

    /// <summary>A whole number, no grouping: CPU ns per message.</summary>
    public static string Whole(double value) => value.ToString("0", CultureInfo.InvariantCulture);

    public static string Percent(double value) => value.ToString("0", CultureInfo.InvariantCulture) + " %";

    public static string Micros(double nanoseconds) => (nanoseconds / 1e3).ToString(nanoseconds < 10_000 ? "0.00" : "0.#", CultureInfo.InvariantCulture);

    public static string Ratio(double value) => value.ToString(value < 0.1 ? "0.000" : "0.00", CultureInfo.InvariantCulture);

    /// <summary>About three significant digits: a figure measured to ±10 % has no more.</summary>
    public static string Number(double value) =>
        value.ToString(Math.Abs(value) >= 100 ? "0" : Math.Abs(value) >= 10 ? "0.#" : "0.##", CultureInfo.InvariantCulture);

    /// <summary>A comparison's change, signed: "+3.2 %", "−4.1 %", "+∞ %" when only the baseline was 0.</summary>
    public static string Change(double percent) => double.IsPositiveInfinity(percent) ? "+∞ %"
        : (percent >= 0 ? "+" : "−") + Math.Abs(percent).ToString("0.0", CultureInfo.InvariantCulture) + " %";

    public static string VerdictName(Verdict verdict) => verdict == Verdict.Unspecified ? "NOT COMPARED" : verdict.ToString().ToUpperInvariant();

    /// <summary>A comparison's one-line summary: the overall verdict, the threshold and how many cells went which way.</summary>
    /// <summary>What a comparison's figures are, in every renderer's words.</summary>
    public const string ComparisonMethod =
        "Medians over the repetitions of each placement, shift (Hodges–Lehmann, 95 % interval) and p (Mann–Whitney, adjusted for the comparison's tests)";

    public static string ComparisonSummary(SuiteComparison c) =>
        $"Overall {VerdictName(c.Verdict)} at a threshold of ±{Number(c.ThresholdPercent)} %: " +
        string.Join(", ", new[] { Verdict.Regressed, Verdict.Improved, Verdict.Inconclusive, Verdict.Same, Verdict.Unspecified }
            .Select(v => (Verdict: v, Count: c.Cells.Count(cell => cell.Verdict == v))).Where(p => p.Count > 0)
            .Select(p => $"{p.Count} {VerdictName(p.Verdict).ToLowerInvariant()}")) +
        $" of {c.Cells.Count} cell(s) in both suites.";

    /// <summary>The metrics of a cell (row) whose change went beyond the threshold, e.g. "latency_p99 +12.0 %".</summary>
    /// <summary>
    /// A comparison row's notes column: the metrics beyond the threshold, why any metric could not be decided (its
    /// note, once however many metrics share it: too few repetitions, placements apart, invalid repetitions), then the
    /// cell's own notes.
    /// </summary>
    public static string RowNotes(IReadOnlyList<MetricChange> metrics, IEnumerable<string> cellNotes) => string.Join("; ",
        new[] { BeyondThreshold(metrics) }
            .Concat(metrics.Where(m => m.Verdict == Verdict.Inconclusive).Select(m => m.Note).Distinct())
            .Concat(cellNotes).Where(n => n.Length > 0));

    public static string BeyondThreshold(IEnumerable<MetricChange> metrics) => string.Join(", ",
        metrics.Where(m => m.Verdict is Verdict.Regressed or Verdict.Improved).Select(m => $"{m.Metric} {Change(m.ShiftPercent ?? m.ChangePercent)}"));

    /// <summary>
    /// A compared cell's table rows: one per placement class its repetitions ran in, labelled with the class when there
    /// are several, each with its own verdict over its metrics.
    /// </summary>
    public static IEnumerable<(string Label, Verdict Verdict, MetricChange? Rate, MetricChange? P99, IReadOnlyList<MetricChange> Metrics)> Rows(CellComparison cell)
    {
        var placements = cell.Metrics.Select(m => m.Placement).Distinct().ToList();
        if (placements.Count == 0)
        {
            yield return (cell.Label, cell.Verdict, null, null, []);
            yield break;
        }

        foreach (var placement in placements)
        {
            var metrics = cell.Metrics.Where(m => m.Placement == placement).ToList();
            string label = placements.Count > 1 || placement is PlacementStrata.Near or PlacementStrata.Far ? $"{cell.Label} ({placement})" : cell.Label;
            yield return (label, placements.Count > 1 ? MetricChange.Overall(metrics.Select(m => m.Verdict)) : cell.Verdict,
                metrics.FirstOrDefault(m => m.Metric == "messages_per_second"), metrics.FirstOrDefault(m => m.Metric == "latency_p99"), metrics);
        }
    }

    /// <summary>
    /// One side's median of a compared metric, "–" where that side had no repetition in the row's placement class (its
    /// median would read 0 and the change +∞).
    /// </summary>
    public static string Side(MetricChange? m, bool baseline, Func<double, string> format) =>
        m is null || Missing(m, baseline) ? "–" : format(baseline ? m.Baseline : m.Candidate);

    /// <summary>The change of the medians, "–" where a side had no repetition in the row's class.</summary>
    public static string SideChange(MetricChange? m) => m is null || Missing(m, true) || Missing(m, false) ? "–" : Change(m.ChangePercent);

    private static bool Missing(MetricChange m, bool baseline) =>
        m.BaselineSamples + m.CandidateSamples > 0 && (baseline ? m.BaselineSamples : m.CandidateSamples) == 0;

    /// <summary>
    /// A tested metric's shift with its interval and adjusted p, e.g. "−20.1 % [−22.0, −18.3] p 0.002"; a shift left
    /// undecided (invalid repetitions) without p; "–" when untested (the notes column says why: <see cref="RowNotes"/>).
    /// </summary>
    public static string Shift(MetricChange? m) => m switch
    {
        null => "–",
        { ShiftPercent: { } shift } => string.Create(CultureInfo.InvariantCulture,
            $"{Change(shift)} [{Signed(m.ShiftCiLowPercent ?? 0)}, {Signed(m.ShiftCiHighPercent ?? 0)}]") +
            (m.PValue is { } p ? string.Create(CultureInfo.InvariantCulture, $" p {p:0.####}") : " (undecided)"),
        _ => "–",
    };

    private static string Signed(double percent) => (percent >= 0 ? "+" : "−") + Math.Abs(percent).ToString("0.0", CultureInfo.InvariantCulture);
}
