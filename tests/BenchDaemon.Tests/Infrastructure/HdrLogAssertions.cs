using HdrHistogram;
using IpcBench.Daemon.Scenarios;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Checks an .hlog (from `run --out` or ExportScenarios) with HdrHistogram's own log reader.</summary>
internal static class HdrLogAssertions
{
    /// <summary>
    /// Each scenario's intervals (tagged with its id, in order, none longer than a tick) add up to exactly the latency
    /// figures the scenario reported: every recorded value once, the same percentiles, minimum, maximum and mean.
    /// </summary>
    public static void HoldsEveryReportedLatency(Stream log, IReadOnlyList<Scenario> scenarios)
    {
        using var reader = new HistogramLogReader(log);
        var byScenario = reader.ReadHistograms().GroupBy(h => h.Tag).ToDictionary(g => g.Key, g => g.ToList());
        Assert.Equal(scenarios.Select(s => s.Id).Order(), byScenario.Keys.Order());
        foreach (var scenario in scenarios)
        {
            var total = LatencyHistograms.Create();
            long previousEnd = 0;
            foreach (var interval in byScenario[scenario.Id])
            {
                Assert.True(interval.StartTimeStamp >= previousEnd && interval.EndTimeStamp >= interval.StartTimeStamp, $"{interval.StartTimeStamp}..{interval.EndTimeStamp}");
                Assert.True(interval.EndTimeStamp - interval.StartTimeStamp <= 1500, $"an interval of {interval.EndTimeStamp - interval.StartTimeStamp} ms");
                previousEnd = interval.EndTimeStamp;
                total.Add(interval);
            }

            var reported = scenario.Stats.Latency;
            Assert.True(total.TotalCount > 0, $"no latency in the log for {scenario.Id} ({scenario.Spec.Transport})");
            Assert.Equal(reported, StatsFormatting.ToLatency(total, reported.Kind == LatencyKind.RoundTrip));
        }
    }
}
