namespace IpcBench.Reports;

/// <summary>
/// A cell's sustainable-rate search as the reports show it: the answer (null when no probe passed), the lowest failing
/// rate above it, how the search ended, and every probe with its figures.
/// </summary>
public sealed record RateSearchReport(double? SustainableRatePerPublisher, double? BracketHigh, string Result, IReadOnlyList<RateProbeResult> Probes);

/// <summary>One rate-limited probe: the rate offered per publisher, whether it passed (and why not), and what it measured.</summary>
public sealed record RateProbeResult(double RatePerPublisher, bool Passed, string Reason, RepetitionResult Result);

/// <summary>
/// One offered rate of a load curve: delivered msg/s, latency percentiles in ns (from intended send times), the
/// publishers' lag behind their intended send times at p99 (ns; null when not measured) and CPU per delivered message
/// (daemon and agents together). <paramref name="Passed"/> is the probe's verdict; null for a sweep's cell.
/// </summary>
public sealed record LoadPoint(double OfferedPerPublisher, double DeliveredPerSecond, double P50, double P99, double P999, double Max,
    double? SenderLagP99, double CpuNanosecondsPerMessage, string ScenarioId, bool? Passed = null, string Reason = "");

/// <summary>
/// A transport's curve within one chart, with its sustainable rate when a search found one (and the search's result).
/// <paramref name="Name"/> is the transport with its wait (<see cref="CellKey.SeriesName"/>), as legends and tables write it.
/// </summary>
public sealed record LoadSeries(string Transport, CellWait Wait, string Name, IReadOnlyList<LoadPoint> Points, double? SustainableRatePerPublisher, double? BracketHigh, string SearchResult);

/// <summary>Latency against offered load for one payload and shape (rate and wait aside), a series per transport and wait.</summary>
public sealed record LoadChart(string Title, IReadOnlyList<LoadSeries> Series);

/// <summary>
/// The "latency against load" view: a rate sweep's cells and a rate search's probes, grouped by everything but
/// transport, wait and rate (transports default to different waits; compared, they belong on one chart). Closed-loop cells (rate 0) have no offered rate to place on the axis and stay in the other tables.
/// A group is charted only when it has a load to plot against: two offered rates or more, or a search.
/// </summary>
public static class LoadCurves
{
    public static IReadOnlyList<LoadChart> Of(SuiteReport report)
    {
        var charts = new List<LoadChart>();
        foreach (var group in report.Cells.GroupBy(c => c.Key with { Transport = string.Empty, Wait = CellWait.Default, RatePerPublisher = 0 }))
        {
            var series = group.GroupBy(c => c.Key.SeriesName).Select(Series).Where(s => s.Points.Count > 0 || s.SearchResult.Length > 0).ToList();
            bool searched = group.Any(c => c.Search is not null);
            if (!searched && group.Select(c => c.Key.RatePerPublisher).Where(r => r > 0).Distinct().Count() < 2)
            {
                continue;
            }

            charts.Add(new LoadChart($"{ReportFormatting.Bytes(group.Key.PayloadBytes)}, {group.Key.Shape}", series));
        }

        return charts;
    }

    private static LoadSeries Series(IGrouping<string, ReportCell> cells)
    {
        var points = cells.Where(c => c.Key.RatePerPublisher > 0)
            .SelectMany(c => c.Repetitions.Where(r => r.Succeeded).Select(r => Point(c.Key.RatePerPublisher, r, null, string.Empty)))
            .Concat(cells.SelectMany(c => c.Search?.Probes ?? []).Where(p => p.Result.Succeeded).Select(p => Point(p.RatePerPublisher, p.Result, p.Passed, p.Reason)))
            .OrderBy(p => p.OfferedPerPublisher).ToList();
        var search = cells.Select(c => c.Search).FirstOrDefault(s => s is not null);
        var key = cells.First().Key;
        return new LoadSeries(key.Transport, key.Wait, cells.Key, points, search?.SustainableRatePerPublisher, search?.BracketHigh, search?.Result ?? string.Empty);
    }

    private static LoadPoint Point(double rate, RepetitionResult r, bool? passed, string reason) => new(rate, r.MessagesPerSecond, r.Latency.P50, r.Latency.P99,
        r.Latency.P999, r.Latency.Max, r.SenderLagP99Nanoseconds, RepetitionStats.CpuNanosecondsPerMessage(r.DaemonCpuPercent + r.AgentsCpuPercent, r.MessagesPerSecond), r.ScenarioId,
        passed, reason);
}
