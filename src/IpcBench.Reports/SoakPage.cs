using System.Globalization;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>A slope per hour with its 95 % interval, over <paramref name="Points"/> points.</summary>
public sealed record SoakPageSlope(double PerHour, double LowPerHour, double HighPerHour, int Points);

/// <summary>One resource of one process ("daemon", "agent 2"): its latest reading and slopes; <paramref name="Counted"/> for threads and descriptors (else bytes).</summary>
public sealed record SoakPageResource(string Process, string Resource, bool Counted, double Latest, SoakPageSlope? SinceStart, SoakPageSlope? LastWindow);

/// <summary>The judgement as the page shows it.</summary>
public sealed record SoakPageJudgement(
    string Verdict, IReadOnlyList<string> Reasons, TimeSpan JudgedOver, double? FirstWindowPerSecond, double? LastWindowPerSecond,
    SoakPageSlope? Throughput, long? LastP99Ns, SoakPageSlope? P99, IReadOnlyList<SoakPageResource> Resources);

/// <summary>A point <paramref name="Hours"/> into the measured window: its delivered msg/s and latency percentiles.</summary>
public sealed record SoakPagePoint(double Hours, double Rate, long? P50Ns, long? P99Ns, long? P999Ns);

/// <summary>One process's memory series ("rss", "committed" or "heap") in bytes against hours; <paramref name="IsDaemon"/> tells the daemon from agents.</summary>
public sealed record SoakPageMemory(string Process, bool IsDaemon, string Measure, IReadOnlyList<(double Hours, double Bytes)> Points);

/// <summary>One scenario of a soak as its page shows it: what ran, how it ended, the judgement, every point and memory series.</summary>
public sealed record SoakPageScenario(
    string Id, string Label, string State, string Error, DateTime? StartedAt, long Lost, long Duplicated, long Corrupted,
    SoakPageJudgement? Soak, IReadOnlyList<SoakPagePoint> Points, IReadOnlyList<SoakPageMemory> Memory);

/// <summary>
/// A soak's page (EXPORT_FORMAT_SOAK_HTML, `run --soak`'s soak.html): the verdicts with their reasons and slopes,
/// throughput, p99 and every process's memory against time (Assets/soak.js draws them from the JSON beside it), and
/// an hour-by-hour table. Several scenarios started together are one soak: one page, one line each.
/// </summary>
public static class SoakPage
{
    private static readonly Lazy<string> Scripts = new(() => string.Join("\n",
        HtmlReport.Asset("chart.umd.min.js"), HtmlReport.Asset("figures.js"), HtmlReport.Asset("soak.js")));

    public static string Render(IReadOnlyList<SoakPageScenario> scenarios, ReportEnvironment? environment)
    {
        var html = new StringBuilder();
        string title = $"Soak of {scenarios.Count} scenario{(scenarios.Count == 1 ? string.Empty : "s")}";
        html.Append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.Append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n");
        html.Append($"<title>IpcBench — {E(title)}</title>\n<style>\n{HtmlReport.Style}\n</style>\n</head>\n<body>\n<header>\n<h1>{E(title)}</h1>\n");
        var started = scenarios.Select(s => s.StartedAt).Where(t => t is not null).Min();
        html.Append($"<p class=\"meta\">Started {E(started?.ToString("u", CultureInfo.InvariantCulture) ?? "–")}; " +
            "judged every point over a line since the start and over the sliding window (SoakRules).</p>\n");
        if (environment is not null)
        {
            HtmlReport.AppendEnvironment(html, environment);
        }

        html.Append("</header>\n");
        AppendVerdicts(html, scenarios);
        html.Append("<main id=\"charts\"></main>\n");
        AppendHours(html, scenarios);
        AppendResources(html, scenarios);
        html.Append("<script type=\"application/json\" id=\"soak-data\">")
            .Append(JsonSerializer.Serialize(Data(scenarios), ReportDocument.JsonOptions))
            .Append("</script>\n<script>\n").Append(Scripts.Value).Append("\n</script>\n</body>\n</html>\n");
        return html.ToString();
    }

    private static void AppendVerdicts(StringBuilder html, IReadOnlyList<SoakPageScenario> scenarios)
    {
        html.Append("<section id=\"verdicts\"><h2>Verdicts</h2>\n<table><thead><tr><th>Scenario</th><th>State</th><th>Verdict</th><th>Judged over</th>" +
            "<th>Lost / dup / corrupt</th><th>msg/s first → last window</th><th>msg/s slope per hour (95 %)</th><th>p99 µs last</th>" +
            "<th>p99 slope µs per hour (95 %)</th><th>Reasons</th></tr></thead><tbody>\n");
        foreach (var s in scenarios)
        {
            var soak = s.Soak;
            string verdict = soak?.Verdict ?? "NOT JUDGED";
            string reasons = soak is null ? "shorter than a judged soak" : string.Join("; ", soak.Reasons);
            html.Append($"<tr><td>{E(s.Label)}<br><code>{E(s.Id)}</code></td><td>{E(s.State)}{(s.Error.Length > 0 ? $": {E(s.Error)}" : string.Empty)}</td>" +
                $"<td class=\"verdict {E(verdict.ToLowerInvariant())}\"><strong>{E(verdict)}</strong></td>" +
                $"<td>{E(soak is null ? "–" : Span(soak.JudgedOver))}</td><td>{s.Lost} / {s.Duplicated} / {s.Corrupted}</td>" +
                $"<td>{E(soak?.FirstWindowPerSecond is { } first && soak.LastWindowPerSecond is { } last ? $"{Count(first)} → {Count(last)}" : "–")}</td>" +
                $"<td>{E(Slope(soak?.Throughput, Count))}</td><td>{E(soak?.LastP99Ns is { } p99 ? Micros(p99) : "–")}</td>" +
                $"<td>{E(Slope(soak?.P99, Micros))}</td><td class=\"method\">{E(reasons)}</td></tr>\n");
        }

        html.Append("</tbody></table></section>\n");
    }

    /// <summary>Per scenario and hour of measured time: the mean rate, the median and highest point p99, memory at the hour's end.</summary>
    private static void AppendHours(StringBuilder html, IReadOnlyList<SoakPageScenario> scenarios)
    {
        html.Append("<section id=\"hours\"><h2>Hour by hour</h2>\n<table><thead><tr><th>Scenario</th><th>Hour</th><th>Points</th><th>msg/s mean</th>" +
            "<th>p99 µs median of points</th><th>p99 µs highest point</th><th>Daemon RSS MiB at the end</th><th>Agents RSS MiB at the end (sum)</th>" +
            "</tr></thead><tbody>\n");
        foreach (var s in scenarios)
        {
            foreach (var hour in s.Points.GroupBy(p => (int)p.Hours))
            {
                var points = hour.ToList();
                var p99s = points.Where(p => p.P99Ns is not null).Select(p => (double)p.P99Ns!.Value).Order().ToList();
                // Each process's last RSS reading inside the hour, summed over the daemon or over the agents.
                string Rss(bool daemon)
                {
                    var last = s.Memory.Where(m => m.Measure == "rss" && m.IsDaemon == daemon)
                        .Select(m => m.Points.LastOrDefault(x => (int)x.Hours == hour.Key)).Where(x => x.Bytes > 0).ToList();
                    return last.Count == 0 ? "–" : Mib(last.Sum(x => x.Bytes));
                }

                html.Append($"<tr><td>{E(s.Label)}</td><td>{hour.Key + 1}</td><td>{points.Count}</td><td>{E(Count(points.Average(p => p.Rate)))}</td>" +
                    $"<td>{E(p99s.Count > 0 ? Micros(p99s[p99s.Count / 2]) : "–")}</td><td>{E(p99s.Count > 0 ? Micros(p99s[^1]) : "–")}</td>" +
                    $"<td>{E(Rss(daemon: true))}</td><td>{E(Rss(daemon: false))}</td></tr>\n");
            }
        }

        html.Append("</tbody></table></section>\n");
    }

    private static void AppendResources(StringBuilder html, IReadOnlyList<SoakPageScenario> scenarios)
    {
        html.Append("<section id=\"resources\"><h2>Every process's resources: latest and slope per hour (95 %)</h2>\n<table><thead><tr><th>Scenario</th>" +
            "<th>Process</th><th>Resource</th><th>Latest</th><th>Since the start</th><th>Last window</th></tr></thead><tbody>\n");
        foreach (var s in scenarios)
        {
            foreach (var r in s.Soak?.Resources ?? [])
            {
                Func<double, string> format = r.Counted ? Count : Mib;
                html.Append($"<tr><td>{E(s.Label)}</td><td>{E(r.Process)}</td><td>{E(r.Resource)}</td>" +
                    $"<td>{E(format(r.Latest))}</td><td>{E(Slope(r.SinceStart, format))}</td><td>{E(Slope(r.LastWindow, format))}</td></tr>\n");
            }
        }

        html.Append("</tbody></table>\n<p class=\"note\">Bytes in MiB. Resources are read after IpcBench:SoakResourceWarmupSeconds of measured time.</p></section>\n");
    }

    private static object Data(IReadOnlyList<SoakPageScenario> scenarios) => new
    {
        scenarios = scenarios.Select(s => new
        {
            id = s.Id,
            label = s.Label,
            points = s.Points.Select(p => new { hours = p.Hours, rate = p.Rate, p50 = p.P50Ns, p99 = p.P99Ns, p999 = p.P999Ns }),
            processes = s.Memory.Select(m => new
            {
                name = m.Process,
                resource = m.Measure,
                points = m.Points.Select(x => new[] { x.Hours, x.Bytes / (1024 * 1024) }),
            }),
        }),
    };

    private static string E(string value) => HtmlEncoder.Default.Encode(value);

    private static string Mib(double bytes) => (bytes / (1024 * 1024)).ToString("0.0", CultureInfo.InvariantCulture);

    private static string Span(TimeSpan span) => span.TotalHours >= 1 ? $"{span.TotalHours:0.00} h" : $"{span.TotalMinutes:0.0} min";

    private static string Slope(SoakPageSlope? slope, Func<double, string> format) => slope is null ? "–"
        : $"{Signed(slope.PerHour, format)} ({Signed(slope.LowPerHour, format)} to {Signed(slope.HighPerHour, format)}), {slope.Points} points";

    private static string Signed(double value, Func<double, string> format) => (value < 0 ? "−" : "+") + format(Math.Abs(value));
}
