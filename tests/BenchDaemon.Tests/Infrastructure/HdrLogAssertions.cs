using System.Globalization;
using HdrHistogram;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Schema;
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
        var byScenario = Read(log).GroupBy(h => h.Tag).ToDictionary(g => g.Key, g => g.ToList());
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
            Assert.Equal(reported, ScenarioProtos.ToProto(StatsFormatting.ToLatency(total, reported.Kind == LatencyKind.RoundTrip)));
        }
    }

    /// <summary>
    /// HistogramLogReader, unless a line holds a histogram compressed beyond what its decoder takes in one DeflateStream
    /// read (HdrHistogram.NET 2.5.0: "does not contain the indicated payload amount"; a busy machine's wide
    /// distributions get there): then the same lines, split as the log format defines them, through HistogramCodec.
    /// </summary>
    private static List<HistogramBase> Read(Stream log)
    {
        using var copy = new MemoryStream();
        log.CopyTo(copy);
        try
        {
            copy.Position = 0;
            using var reader = new HistogramLogReader(copy);
            return [.. reader.ReadHistograms()];
        }
        catch (ArgumentException e) when (e.Message.Contains("indicated payload amount", StringComparison.Ordinal))
        {
            var histograms = new List<HistogramBase>();
            foreach (var line in System.Text.Encoding.UTF8.GetString(copy.ToArray()).Split('\n'))
            {
                if (line.Length == 0 || line[0] is '#' or '"')
                {
                    continue;
                }

                // Tag=<id>,<start s>,<length s>,<max ms>,<base64 compressed histogram>
                var fields = line.Split(',');
                Assert.Equal(5, fields.Length);
                Assert.StartsWith("Tag=", fields[0], StringComparison.Ordinal);
                var histogram = HistogramCodec.Decode(Convert.FromBase64String(fields[4]));
                histogram.Tag = fields[0]["Tag=".Length..];
                double start = double.Parse(fields[1], CultureInfo.InvariantCulture);
                histogram.StartTimeStamp = (long)(start * 1000);
                histogram.EndTimeStamp = (long)((start + double.Parse(fields[2], CultureInfo.InvariantCulture)) * 1000);
                histograms.Add(histogram);
            }

            return histograms;
        }
    }
}
