using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The dashboards against real data: a daemon, a real Prometheus scraping it every second, a 2:2 scenario on two
/// transports, and every PromQL expression of every dashboard evaluated through Prometheus' HTTP API.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class DashboardQueryTests(ITestOutputHelper output)
{
    /// <summary>Grafana's $__rate_interval for a 1 s scrape interval: max(4 × scrape interval, $__interval + scrape interval).</summary>
    private const string RateInterval = "4s";

    private static readonly TimeSpan Warmup = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(4);

    [PrometheusFact]
    public async Task EveryDashboardQuery_ReturnsData_ForA2To2RunOnUdsAndTcp_AndCpuStaysInRange()
    {
        PrometheusTools.EnsureInstalled();
        await using var daemon = await DaemonProcess.StartAsync();
        using var log = daemon.LogTo(output);
        await using var prometheus = await PrometheusServer.StartAsync(daemon.MetricsPort);
        await prometheus.WaitForTargetUpAsync(TimeSpan.FromSeconds(20));
        string instance = $"127.0.0.1:{daemon.MetricsPort}";

        // Rate-limited (2 × 20k msg/s, 4 deliveries each): load enough to measure, room enough that scrapes stay on time.
        var runs = new List<Scenario>();
        foreach (var transport in (string[])["uds", "tcp"])
        {
            var spec = Specs.Stream(transport, publishers: 2, subscribers: 2, Duration, Warmup, payloadBytes: 1024).With(s => s.RatePerPublisher = 20_000);
            var result = await daemon.RunScenarioAsync(spec);
            new ScenarioExpectations(result, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
            runs.Add(result);
        }

        // Two more scrapes, so the finished state (end times, COMPLETED) is in the TSDB.
        await Task.Delay(TimeSpan.FromSeconds(2.5));
        var afterAll = DateTimeOffset.UtcNow;

        var failures = new List<string>();
        int evaluated = 0;
        foreach (var run in runs)
        {
            // Late in the measured window: the last rate interval is all inside the run.
            var started = run.StartedAt.ToDateTimeOffset();
            var during = started + Warmup + Duration - TimeSpan.FromSeconds(0.4);
            var values = new Dictionary<string, string>
            {
                ["instance"] = instance,
                ["scenario"] = run.Id,
                ["transport"] = run.Spec.Transport,
                ["payload"] = run.Spec.PayloadBytes.ToString(CultureInfo.InvariantCulture),
                ["__rate_interval"] = RateInterval,
            };
            foreach (var file in Dashboards.Files)
            {
                foreach (var query in Dashboards.Queries(file))
                {
                    var expression = Dashboards.Substitute(query.Expression, values);
                    // End times exist once a scenario has ended; everything else while it runs.
                    var at = query.Expression.Contains("_end_time_seconds", StringComparison.Ordinal) ? afterAll : during;
                    var samples = await prometheus.QueryAsync(expression, at);
                    evaluated++;
                    var finite = samples.Where(s => double.IsFinite(s.Value)).ToList();
                    output.WriteLine($"{query} [{run.Spec.Transport}] -> {samples.Count} series, e.g. {finite.FirstOrDefault()}");
                    if (finite.Count == 0)
                    {
                        failures.Add($"{query} for {run.Spec.Transport} scenario {run.Id} at {at:HH:mm:ss.fff}: "
                            + (samples.Count == 0 ? "no data" : $"only non-finite values ({string.Join("; ", samples)})") + $"\n      {expression}");
                    }
                }

                foreach (var (name, variableQuery) in Dashboards.VariableQueries(file))
                {
                    var (expression, label) = Dashboards.LabelValuesAsPromQL(Dashboards.Substitute(variableQuery, values));
                    var found = (await prometheus.QueryAsync(expression, during)).Select(s => s.Labels.GetValueOrDefault(label)).ToList();
                    evaluated++;
                    string expected = name == "payload" ? values["payload"] : values.GetValueOrDefault(name, instance);
                    if (!found.Contains(expected))
                    {
                        failures.Add($"{Path.GetFileName(file)}: variable ${name} ({variableQuery}) offers [{string.Join(", ", found)}], not {expected}");
                    }
                }
            }

            // The CPU panels (unit percent, % of one core) over the measured window: 0..200 % on this 2-core machine;
            // 250 allows for a rate window that straddles a late scrape.
            foreach (var query in Dashboards.Files.SelectMany(Dashboards.Queries).Where(q => q.Unit == "percent"))
            {
                var samples = await prometheus.QueryRangeAsync(Dashboards.Substitute(query.Expression, values),
                    started + Warmup + TimeSpan.FromSeconds(0.5), during, TimeSpan.FromSeconds(1));
                var outside = samples.Where(s => !(s.Value >= 0 && s.Value <= 250)).ToList();
                output.WriteLine($"{query} [{run.Spec.Transport}] CPU %: {string.Join(", ", samples.Select(s => s.Value.ToString("0.#", CultureInfo.InvariantCulture)))}");
                if (samples.Count == 0 || outside.Count > 0)
                {
                    failures.Add($"{query} for {run.Spec.Transport}: CPU % outside 0..250: "
                        + (samples.Count == 0 ? "no data" : string.Join("; ", outside)));
                }
            }

            // And the counters agree with the engine: delivered msg/s by rate() near the scenario's own measured result.
            var rate = await prometheus.QueryAsync(
                $"sum(rate(ipcbench_messages_received_total{{scenario=\"{run.Id}\"}}[{RateInterval}]))", during);
            double expectedRate = run.Stats.MessagesPerSecond;
            if (rate.Count != 1 || !(rate[0].Value > 0.5 * expectedRate && rate[0].Value < 1.5 * expectedRate))
            {
                failures.Add($"rate(ipcbench_messages_received_total) of {run.Spec.Transport} is {string.Join("; ", rate)}, the scenario measured {expectedRate:0} msg/s");
            }
        }

        Assert.True(failures.Count == 0,
            $"{failures.Count} of {evaluated} dashboard queries failed:\n  - {string.Join("\n  - ", failures)}\n{daemon.Output.Describe()}\n--- prometheus ---\n{prometheus.Output.Describe()}");
        Assert.True(evaluated > 60, $"only {evaluated} queries were evaluated");
    }
}
