using System.Globalization;
using System.Text;

namespace IpcBench.Daemon.Reports;

/// <summary>
/// REPORT_FORMAT_CSV: one row per cell and repetition, then one aggregated row per cell (repetition "median", with
/// min and max beside), so a spreadsheet can plot either without parsing the JSON. The noise columns come last, so the
/// earlier ones keep their positions: a round's (or, on the median row, the cell's) retries on max_noise_percent, the
/// noise of each retried attempt ("31.2;28.4"), and whether the round's last attempt was still too noisy. With a baseline,
/// the comparison follows as a second table.
/// </summary>
public static class CsvReport
{
    private static readonly string[] Header =
    [
        "suite_id", "cell", "transport", "payload_bytes", "publishers", "subscribers", "topology", "payload_access", "mode", "wait_strategy",
        "repetition", "scenario_id", "error", "messages_per_second", "messages_per_second_min", "messages_per_second_max", "bytes_per_second",
        "daemon_cpu_percent", "agents_cpu_percent", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_p9999_ns",
        "latency_max_ns", "spread_percent", "spread_exceeded", "noise_retries", "noise_retried_percent", "failed_noisy",
    ];

    private static readonly string[] ComparisonHeader =
    [
        "baseline_id", "candidate_id", "threshold_percent", "cell", "metric", "unit", "baseline", "candidate", "ratio", "change_percent", "verdict", "notes",
    ];

    public static string Render(SuiteReport report, SuiteComparison? comparison = null)
    {
        var text = new StringBuilder();
        Row(text, Header);
        for (int i = 0; i < report.Cells.Count; i++)
        {
            var cell = report.Cells[i];
            var k = cell.Key;
            string[] key = [report.SuiteId, Num(i), k.Transport, Num(k.PayloadBytes), Num(k.Publishers), Num(k.Subscribers), Snake(k.Topology),
                Snake(k.Access), Snake(k.Mode), Snake(k.Wait)];
            var noisy = cell.NoisyAttempts ?? [];
            foreach (var r in cell.Repetitions)
            {
                var l = r.Latency;
                var round = NoiseMark.Of([.. noisy.Where(a => a.Round == r.Round)]);
                Row(text, [.. key, Num(r.Round), r.ScenarioId, r.Error ?? string.Empty, Num(r.MessagesPerSecond), string.Empty, string.Empty,
                    Num(r.BytesPerSecond), Num(r.DaemonCpuPercent), Num(r.AgentsCpuPercent), Num(l.P50), Num(l.P90), Num(l.P99), Num(l.P999),
                    Num(l.P9999), Num(l.Max), string.Empty, string.Empty, .. NoiseFields(round)]);
            }

            var s = cell.Summary;
            Row(text, [.. key, "median", string.Empty, s.Failed > 0 ? $"{s.Failed} failed" : string.Empty, Num(s.MessagesPerSecond.Median),
                Num(s.MessagesPerSecond.Min), Num(s.MessagesPerSecond.Max), Num(s.BytesPerSecond.Median), Num(s.DaemonCpuPercent.Median),
                Num(s.AgentsCpuPercent.Median), Num(s.LatencyP50.Median), Num(s.LatencyP90.Median), Num(s.LatencyP99.Median),
                Num(s.LatencyP999.Median), Num(s.LatencyP9999.Median), Num(s.LatencyMax.Median), Num(s.SpreadPercent),
                s.SpreadExceeded ? "true" : "false", .. NoiseFields(cell.Noise)]);
        }

        if (comparison is not null)
        {
            AppendComparison(text, comparison);
        }

        return text.ToString();
    }

    private static string[] NoiseFields(NoiseMark noise) =>
        [Num(noise.Retries), string.Join(';', noise.RetriedNoisePercent.Select(Num)), noise.FailedNoisy ? "true" : "false"];

    /// <summary>
    /// After one empty line, a second table under its title row: one row per cell and metric (cell "all", metric
    /// "verdict" for the overall verdict), so a spreadsheet filters and pivots it without knowing the metric set.
    /// </summary>
    private static void AppendComparison(StringBuilder text, SuiteComparison c)
    {
        text.Append('\n');
        Row(text, [$"Compared with baseline {c.BaselineId}"]);
        Row(text, ComparisonHeader);
        string[] suites = [c.BaselineId, c.CandidateId, Num(c.ThresholdPercent)];
        Row(text, [.. suites, "all", "verdict", string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, Snake(c.Verdict), string.Join("; ", c.Notes)]);
        foreach (var cell in c.Cells)
        {
            if (cell.Metrics.Count == 0)
            {
                Row(text, [.. suites, cell.Label, "verdict", string.Empty, string.Empty, string.Empty, string.Empty, string.Empty, Snake(cell.Verdict),
                    string.Join("; ", cell.Notes)]);
            }

            foreach (var m in cell.Metrics)
            {
                Row(text, [.. suites, cell.Label, m.Metric, m.Unit, Num(m.Baseline), Num(m.Candidate), Num(m.Ratio), Num(m.ChangePercent), Snake(m.Verdict),
                    string.Join("; ", cell.Notes)]);
            }
        }
    }

    private static string Num(double value) => value.ToString("R", CultureInfo.InvariantCulture);

    private static string Snake<T>(T value) where T : struct, Enum =>
        System.Text.Json.JsonNamingPolicy.SnakeCaseLower.ConvertName(value.ToString());

    private static void Row(StringBuilder text, IEnumerable<string> fields)
    {
        text.AppendJoin(',', fields.Select(Quote));
        text.Append('\n');
    }

    /// <summary>RFC 4180 quoting; a leading =, +, - or @ is prefixed with ' so a spreadsheet never evaluates a suite's text.</summary>
    private static string Quote(string field)
    {
        if (field.Length > 0 && "=+@".Contains(field[0]) || field.StartsWith('-') && !double.TryParse(field, CultureInfo.InvariantCulture, out _))
        {
            field = "'" + field;
        }

        return field.AsSpan().IndexOfAny(",\"\r\n") >= 0 ? "\"" + field.Replace("\"", "\"\"") + "\"" : field;
    }
}
