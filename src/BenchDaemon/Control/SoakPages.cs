using IpcBench.Daemon.Model;
using IpcBench.Reports;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The engine's soak records as the soak page's view (Reports knows nothing of the engine): EXPORT_FORMAT_SOAK_HTML and
/// `run --soak`'s soak.html both render through <see cref="Render"/>.
/// </summary>
public static class SoakPages
{
    public static string Render(IReadOnlyList<ScenarioResult> results, Func<string, IReadOnlyList<SoakPoint>> pointsOf)
    {
        var scenarios = results.Select(r =>
        {
            var s = r.Scenario;
            var stats = s.Stats;
            var points = pointsOf(s.Id);
            return new SoakPageScenario(s.Id, Label(s.Spec), ScenarioExporter.StateName(s.State), s.Error, s.StartedAt,
                stats?.MessagesLost ?? 0, stats?.MessagesDuplicated ?? 0, stats?.MessagesCorrupted ?? 0, stats?.Soak is { } soak ? View(soak) : null,
                [.. points.Select(p => new SoakPagePoint(p.At.TotalHours, p.DeliveredPerSecond, p.P50Ns, p.P99Ns, p.P999Ns))], Memory(points));
        }).ToList();
        return SoakPage.Render(scenarios, results.FirstOrDefault()?.Scenario.Environment is { } env ? SuiteReports.Environment(env) : null);
    }

    private static SoakPageJudgement View(SoakSummary soak) => new(
        soak.Verdict.ToString().ToUpperInvariant(), soak.Reasons, soak.JudgedOver, soak.FirstWindowMessagesPerSecond, soak.LastWindowMessagesPerSecond,
        Slope(soak.Throughput.SinceStart), soak.LastP99Ns, Slope(soak.LatencyP99Ns.SinceStart),
        [.. soak.Processes.SelectMany(p => p.Resources.Select(r => new SoakPageResource(ProcessName(p.Role, p.Index), r.Resource.ToString(),
            r.Resource is ProcessResource.Threads or ProcessResource.Descriptors, r.Latest, Slope(r.Trend.SinceStart), Slope(r.Trend.LastWindow))))]);

    private static SoakPageSlope? Slope(TrendSlope? slope) => slope is null ? null : new(slope.PerHour, slope.LowPerHour, slope.HighPerHour, slope.Points);

    /// <summary>Each process's RSS, GC-committed memory and live heap against hours: what the memory charts and the hour table draw.</summary>
    private static List<SoakPageMemory> Memory(IReadOnlyList<SoakPoint> points) =>
    [
        .. points.SelectMany(p => p.Processes.Select(v => (p.At, v)))
            .Where(x => x.v.Resource is ProcessResource.RssBytes or ProcessResource.ManagedHeapBytes or ProcessResource.GcCommittedBytes)
            .GroupBy(x => (x.v.Role, x.v.Index, x.v.Resource))
            .Select(g => new SoakPageMemory(ProcessName(g.Key.Role, g.Key.Index), g.Key.Index < 0,
                g.Key.Resource switch { ProcessResource.RssBytes => "rss", ProcessResource.ManagedHeapBytes => "heap", _ => "committed" },
                [.. g.Select(x => (x.At.TotalHours, x.v.Value))])),
    ];

    private static string ProcessName(string role, int index) => index < 0 ? role : $"{role} {index}";

    private static string Label(RunSpec? spec)
    {
        if (spec is null)
        {
            return "–";
        }

        string wait = spec.WaitMode?.ToString().ToLowerInvariant() ?? "default wait";
        string rate = spec.RatePerPublisher > 0 ? $"{ReportFormatting.Count(spec.RatePerPublisher)} msg/s per publisher" : "closed loop";
        return $"{spec.Transport} {ReportFormatting.Bytes(spec.PayloadBytes)} {spec.Publishers}:{spec.Subscribers} {spec.Topology.ToString().ToLowerInvariant()} {wait}, {rate}";
    }
}
