using System.Globalization;

namespace IpcBench.Reports;

/// <summary>
/// REPORT_FORMAT_CSV: one row per cell and repetition, then one aggregated row per cell (repetition "median", with
/// min and max beside), so a spreadsheet can plot either without parsing the JSON. Columns added later come after the
/// others, which keep their positions. The noise columns: a round's (or, on the median row, the cell's) retries on
/// max_noise_percent, the noise of each retried attempt ("31.2;28.4"), and whether the round's last attempt was still
/// too noisy. Then the modality columns (<see cref="Modality"/>): on a repetition's row its placement class and the
/// msg/s mode it fell in (1 the slowest), on the median row the number of msg/s modes (0: too few repetitions to tell)
/// with the text the tables show, and the same for latency p50 (empty without latency samples). Then the validity
/// issues (kinds joined by ';', and their details; on the median row the cell's kinds and which rounds). Then, on the
/// median row only: how well the msg/s median is known (MedianPrecision) and, in an adaptive suite, why the cell took
/// no more rounds. Then the offered load: every row's rate per publisher (0 closed loop); in a rate search, one row per
/// probe (repetition "probe", its own rate, whether it passed and why not) and on the median row the sustainable rate
/// and how the search ended; then a repetition's or probe's sender lag p99 (rate-limited runs). Then a column per metric
/// of <see cref="ReportMetrics.All"/> none of the above shows (CPU ns per message, daemon and agents), so a new metric
/// gets its column by its line there, on every row (the median row: the cell's figure). With a baseline,
/// the comparison is a document of its own (<see cref="RenderComparison"/>): a CSV file holds one table.
/// </summary>
public static class CsvReport
{
    private static readonly string[] Fixed =
    [
        "suite_id", "cell", "transport", "payload_bytes", "publishers", "subscribers", "topology", "payload_access", "mode", "wait_strategy",
        "repetition", "scenario_id", "error", "messages_per_second", "messages_per_second_min", "messages_per_second_max", "bytes_per_second",
        "daemon_cpu_percent", "agents_cpu_percent", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_p9999_ns",
        "latency_max_ns", "spread_percent", "spread_exceeded", "noise_retries", "noise_retried_percent", "failed_noisy",
        "placement", "messages_per_second_mode", "messages_per_second_modes", "messages_per_second_modality", "latency_p50_modes", "latency_p50_modality", "validity", "validity_detail",
        "median_precision_percent", "repetition_stop",
        "rate_per_publisher", "probe_passed", "probe_reason", "sustainable_rate_per_publisher", "rate_search_result", "sender_lag_p99_ns",
    ];

    /// <summary>The metrics (<see cref="ReportMetrics.All"/>) with no column above: a column each after them, in the list's order.</summary>
    private static readonly ReportMetric[] Appended = [.. ReportMetrics.All.Where(m => !Fixed.Contains(m.CsvColumn))];

    private static readonly string[] Header = [.. Fixed, .. Appended.Select(m => m.CsvColumn)];

    private static readonly string[] ComparisonHeader =
    [
        "baseline_id", "candidate_id", "threshold_percent", "cell", "metric", "unit", "baseline", "candidate", "ratio", "change_percent", "verdict", "notes",
        "placement", "p_value", "shift_percent", "shift_ci_low_percent", "shift_ci_high_percent", "baseline_samples", "candidate_samples",
    ];

    public static string Render(SuiteReport report)
    {
        var modality = CellModality.Of(report);
        return CsvDocument.Write(Header, report.Cells.SelectMany((cell, i) => CellRows(report.SuiteId, i, cell, modality[i])));
    }

    private static IEnumerable<CsvField[]> CellRows(string suiteId, int index, ReportCell cell, CellModality modality)
    {
        var k = cell.Key;
        CsvField[] key = [suiteId, index, k.Transport, k.PayloadBytes, k.Publishers, k.Subscribers, Snake(k.Topology), Snake(k.Access), Snake(k.Mode),
            Snake(k.Wait)];
        var noisy = cell.NoisyAttempts ?? [];
        for (int i = 0; i < cell.Repetitions.Count; i++)
        {
            var r = cell.Repetitions[i];
            var l = r.Latency;
            var round = NoiseMark.Of([.. noisy.Where(a => a.Round == r.Round)]);
            CsvField mode = r.Succeeded && modality.MessagesPerSecond.ModeOf(r.MessagesPerSecond) is { } m ? m : string.Empty;
            yield return [.. key, r.Round, r.ScenarioId, r.Error, r.MessagesPerSecond, string.Empty, string.Empty, r.BytesPerSecond,
                r.DaemonCpuPercent, r.AgentsCpuPercent, l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max, string.Empty, string.Empty, .. NoiseFields(round),
                modality.Placements[i], mode, string.Empty, string.Empty, string.Empty, string.Empty,
                string.Join(';', (r.Validity ?? []).Select(v => v.Kind)), string.Join("; ", (r.Validity ?? []).Select(v => v.Detail)),
                string.Empty, string.Empty, k.RatePerPublisher, string.Empty, string.Empty, string.Empty, string.Empty, Optional(r.SenderLagP99Nanoseconds),
                .. Figures(r)];
        }

        foreach (var probe in cell.Search?.Probes ?? [])
        {
            var r = probe.Result;
            var l = r.Latency;
            yield return [.. key, "probe", r.ScenarioId, r.Error, r.MessagesPerSecond, string.Empty, string.Empty, r.BytesPerSecond,
                r.DaemonCpuPercent, r.AgentsCpuPercent, l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max, string.Empty, string.Empty, string.Empty, string.Empty,
                string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, string.Empty,
                string.Join(';', (r.Validity ?? []).Select(v => v.Kind)), string.Join("; ", (r.Validity ?? []).Select(v => v.Detail)),
                string.Empty, string.Empty, probe.RatePerPublisher, Bool(probe.Passed), probe.Reason, string.Empty, string.Empty, Optional(r.SenderLagP99Nanoseconds),
                .. Figures(r)];
        }

        var s = cell.Summary;
        yield return [.. key, "median", string.Empty, s.Failed > 0 ? $"{s.Failed} failed" : string.Empty, s.MessagesPerSecond.Median,
            s.MessagesPerSecond.Min, s.MessagesPerSecond.Max, s.BytesPerSecond.Median, s.DaemonCpuPercent.Median, s.AgentsCpuPercent.Median,
            s.LatencyP50.Median, s.LatencyP90.Median, s.LatencyP99.Median, s.LatencyP999.Median, s.LatencyP9999.Median, s.LatencyMax.Median,
            s.SpreadPercent, Bool(s.SpreadExceeded), .. NoiseFields(cell.Noise), string.Empty, string.Empty, modality.MessagesPerSecond.ModeCount,
            modality.MessagesPerSecond.Text, modality.LatencyP50 is { } p50 ? p50.ModeCount : string.Empty, modality.LatencyP50?.Text,
            string.Join(';', cell.Validity.Kinds), cell.Validity.Text,
            Optional(s.MedianPrecisionPercent), cell.Stop == StopReason.None ? string.Empty : Snake(cell.Stop),
            k.RatePerPublisher, string.Empty, string.Empty, Optional(cell.Search?.SustainableRatePerPublisher), cell.Search?.Result, string.Empty,
            .. Appended.Select(m => (CsvField)m.Of(s))];
    }

    private static IEnumerable<CsvField> Figures(RepetitionResult r) => Appended.Select(m => (CsvField)m.Read(r));

    private static CsvField[] NoiseFields(NoiseMark noise) =>
        [noise.Retries, string.Join(';', noise.RetriedNoisePercent.Select(Num)), Bool(noise.FailedNoisy)];

    /// <summary>
    /// ExportSuite's comparison_content: one row per cell and metric (cell "all", metric "verdict" for the overall
    /// verdict), so a spreadsheet filters and pivots it without knowing the metric set. Each row names both suites,
    /// which the title row of the appended table used to say.
    /// </summary>
    public static string RenderComparison(SuiteComparison c) => CsvDocument.Write(ComparisonHeader, ComparisonRows(c));

    private static IEnumerable<CsvField[]> ComparisonRows(SuiteComparison c)
    {
        CsvField[] suites = [c.BaselineId, c.CandidateId, c.ThresholdPercent];
        CsvField[] untested = [string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, string.Empty];
        yield return [.. suites, "all", "verdict", string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, Snake(c.Verdict), string.Join("; ", c.Notes),
            .. untested];
        foreach (var cell in c.Cells)
        {
            if (cell.Metrics.Count == 0)
            {
                yield return [.. suites, cell.Label, "verdict", string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, Snake(cell.Verdict),
                    string.Join("; ", cell.Notes), .. untested];
            }

            foreach (var m in cell.Metrics)
            {
                yield return [.. suites, cell.Label, m.Metric, m.Unit, m.Baseline, m.Candidate, m.Ratio, m.ChangePercent, Snake(m.Verdict),
                    string.Join("; ", new[] { m.Note }.Concat(cell.Notes).Where(n => n.Length > 0)), m.Placement, Optional(m.PValue), Optional(m.ShiftPercent),
                    Optional(m.ShiftCiLowPercent), Optional(m.ShiftCiHighPercent), m.BaselineSamples, m.CandidateSamples];
            }
        }
    }

    // Inside a text field (the retried noise list), where CsvHelper does not format numbers.
    private static string Num(double value) => value.ToString("R", CultureInfo.InvariantCulture);

    private static CsvField Optional(double? value) => value is { } v ? v : string.Empty;

    private static string Bool(bool value) => value ? "true" : "false";

    private static string Snake<T>(T value) where T : struct, Enum =>
        System.Text.Json.JsonNamingPolicy.SnakeCaseLower.ConvertName(value.ToString());
}
