using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The dashboards against real data: a daemon, a real Prometheus scraping it every second (one pair for the class),
/// a 2:2 scenario on two transports, and every PromQL expression of every dashboard evaluated through Prometheus' HTTP API.
/// </summary>
/// <remarks>
/// What the class holds is that each query has data, not how fast anything ran: every scenario is paced with BLOCK
/// waits (<see cref="Specs.Paced"/>). It stays in the measuring lane all the same: its two daemons, Prometheus and
/// paced scenarios took 20-60 % of a core; moved to the wait lane, the class ran beside CrossProcessScenarioTests'
/// rate-bounded runs, one of whose grpc-uds windows delivered 1,840 msg/s of its 2,000 ± 5 % with 79 % of the machine
/// taken by other processes (fresh-machine CI run, 2026-11-30), for a test run no shorter (304 against 317 s).
/// </remarks>
[Collection(DaemonCollection.Name)]
public sealed class DashboardQueryTests(ScrapedDaemon scraped, ITestOutputHelper output) : IClassFixture<ScrapedDaemon>
{
    /// <summary>Grafana's $__rate_interval for a 1 s scrape interval: max(4 × scrape interval, $__interval + scrape interval).</summary>
    private const string RateInterval = "4s";

    private static readonly TimeSpan Warmup = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(4);

    [PrometheusFact]
    public async Task EveryDashboardQuery_ReturnsData_ForA2To2RunOnUdsAndTcp_AndCpuStaysInRange()
    {
        var (daemon, prometheus) = await scraped.GetAsync();
        using var log = daemon.LogTo(output);
        string instance = $"127.0.0.1:{daemon.MetricsPort}";

        // Paced (2 × 2,000 msg/s, 4 deliveries each, BLOCK waits): every series moves, the scrapes stay on time.
        // Both transports side by side: every query names its scenario or transport.
        var runs = (await Task.WhenAll(((string[])["uds", "tcp"]).Select(transport => daemon.RunScenarioAsync(
            Specs.Stream(transport, publishers: 2, subscribers: 2, Duration, Warmup, payloadBytes: 1024).Paced())))).ToList();
        foreach (var result in runs)
        {
            new ScenarioExpectations(result, daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();
        }

        // Until a scrape after both ended is in the TSDB: their end times, which only finished scenarios have.
        var afterAll = await UntilScrapedAsync(prometheus,
            $"ipcbench_scenario_end_time_seconds{{instance=\"{instance}\", scenario=~\"{string.Join('|', runs.Select(r => r.Id))}\"}}",
            samples => samples.Count == runs.Count, "the end times of both scenarios");

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
                // The soak series exist for soaks only: SoakRowQueries_ShowARunningSoak evaluates those.
                foreach (var query in Dashboards.Queries(file).Where(q => !IsSoakOnly(q)))
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

    private static bool IsSoakOnly(DashboardQuery query) => query.Expression.Contains("ipcbench_soak_", StringComparison.Ordinal);

    /// <summary>
    /// The Soak row against a real soak: an open-ended 1:2 uds scenario, judged every second (the fixture's
    /// IpcBench:SoakPointSeconds=1), and once its processes' resources have been fitted every query of the row must show it.
    /// </summary>
    [PrometheusFact]
    public async Task SoakRowQueries_ShowARunningSoak()
    {
        var (daemon, prometheus) = await scraped.GetAsync();
        using var log = daemon.LogTo(output);
        string instance = $"127.0.0.1:{daemon.MetricsPort}";
        var queries = Dashboards.Queries(Path.Combine(Dashboards.Directory, "ipcbench.json")).Where(q => q.Where.StartsWith("panel 'Soak", StringComparison.Ordinal)).ToList();
        Assert.True(queries.Count >= 7, $"only {queries.Count} queries in the Soak row");
        Assert.Contains(queries, IsSoakOnly);

        var soak = await daemon.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, duration: null, warmup: Warmup, payloadBytes: 1024)
            .Paced());
        // The daemon is shared with the other tests: never leave the soak running, whatever fails.
        try
        {
            var fitted = await daemon.WaitForAsync(soak.Id, s => s.Stats?.Soak is { } judged && judged.Processes.Count == 3
                && judged.Processes.All(p => p.Resources.Count > 0 && p.Resources[0].Trend?.SinceStart?.Points >= 3), TimeSpan.FromSeconds(60),
                "a soak whose three processes' resources are fitted");
            // Every resource the judgement fitted for the agents has its growth series.
            int agentResources = fitted.Stats.Soak.Processes.Where(p => p.Role == "agent").Sum(p => p.Resources.Count(r => r.Trend?.SinceStart is not null));
            var at = await UntilScrapedAsync(prometheus,
                $"ipcbench_soak_resource_growth_per_second{{instance=\"{instance}\", scenario=\"{soak.Id}\", role=\"agent\"}}",
                samples => samples.Count >= agentResources, "both agents' resource growth");
            var values = new Dictionary<string, string>
            {
                ["instance"] = instance,
                ["scenario"] = soak.Id,
                ["transport"] = "uds",
                ["__rate_interval"] = RateInterval,
            };
            var failures = new List<string>();
            foreach (var query in queries)
            {
                var expression = Dashboards.Substitute(query.Expression, values);
                var samples = (await prometheus.QueryAsync(expression, at)).Where(s => double.IsFinite(s.Value)).ToList();
                output.WriteLine($"{query} -> {string.Join("; ", samples)}");
                if (samples.Count == 0)
                {
                    failures.Add($"{query}: no finite series\n      {expression}");
                }
            }

            Assert.True(failures.Count == 0,
                $"{failures.Count} Soak row queries failed:\n  - {string.Join("\n  - ", failures)}\n{daemon.Output.Describe()}\n--- prometheus ---\n{prometheus.Output.Describe()}");
        }
        finally
        {
            await daemon.StopScenarioAsync(soak.Id);
            await daemon.WaitUntilFinishedAsync(soak.Id, TimeSpan.FromSeconds(30));
        }
    }

    /// <summary>
    /// The Suites row against a real suite: eight short in-process scenarios, and while the suite is past its second
    /// scenario every ipcbench_suite_ query of the dashboards is evaluated and must show it (active, k of n, progress, pace).
    /// </summary>
    [PrometheusFact]
    public async Task SuiteRowQueries_ShowTheRunningSuite()
    {
        var (daemon, prometheus) = await scraped.GetAsync();
        using var log = daemon.LogTo(output);
        string instance = $"127.0.0.1:{daemon.MetricsPort}";
        var queries = Dashboards.Files.SelectMany(Dashboards.Queries).Where(q => q.Expression.Contains("ipcbench_suite_", StringComparison.Ordinal)).ToList();
        Assert.True(queries.Count >= 4, $"only {queries.Count} suite queries in the dashboards");

        // 4 payloads x 2 rounds of channels, 1 s each after 0.5 s warmup: about 14 s, long enough to look at mid-way. Paced
        // with BLOCK waits, as every scenario of this class.
        var spec = new SuiteSpec
        {
            Duration = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(TimeSpan.FromSeconds(1)),
            Warmup = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(TimeSpan.FromSeconds(0.5)),
            Repetitions = 2,
            RatePerPublisher = Specs.PacedRate,
        };
        spec.WaitStrategies.Add(WaitStrategy.Block);
        spec.Transports.Add("channels");
        spec.PayloadBytes.AddRange([8, 64, 512, 4096]);
        var started = await daemon.Control.StartSuiteAsync(new StartSuiteRequest { Spec = spec });
        // The daemon is shared with the other test: never leave the suite running, whatever fails.
        try
        {
            Suite suite;
            var clock = System.Diagnostics.Stopwatch.StartNew();
            do
            {
                await Task.Delay(100);
                suite = await daemon.Control.GetSuiteAsync(new GetSuiteRequest { Id = started.Id });
            }
            while (suite.ScenariosDone < 2 && suite.State is SuiteState.Pending or SuiteState.Running && clock.Elapsed < TimeSpan.FromSeconds(120));

            Assert.True(suite.ScenariosDone >= 2 && suite.State == SuiteState.Running, $"the suite is not running past its second scenario: {suite}");
            // Until Prometheus has scraped the second finish: the scrape before it (1 s earlier, inside the 4 s rate window)
            // still had fewer done, so the gauges have moved within the window.
            var at = await UntilScrapedAsync(prometheus, $"ipcbench_suite_scenarios_done{{instance=\"{instance}\"}} >= 2", samples => samples.Count == 1,
                "the suite's second finished scenario");
            var values = new Dictionary<string, string> { ["instance"] = instance, ["__rate_interval"] = RateInterval };
            var failures = new List<string>();
            var seen = new Dictionary<string, double>();
            foreach (var query in queries)
            {
                var expression = Dashboards.Substitute(query.Expression, values);
                var samples = (await prometheus.QueryAsync(expression, at)).Where(s => double.IsFinite(s.Value)).ToList();
                output.WriteLine($"{query} -> {string.Join("; ", samples)}");
                if (samples.Count != 1)
                {
                    failures.Add($"{query}: {samples.Count} finite series, expected one (the daemon)\n      {expression}");
                    continue;
                }

                seen[expression] = samples[0].Value;
            }

            // What each series must say mid-way through an 8-scenario suite, whichever panel shows it.
            foreach (var (expression, value) in seen)
            {
                bool ok = expression switch
                {
                    _ when expression.StartsWith("100 *", StringComparison.Ordinal) => value > 0 && value < 100,
                    _ when expression.Contains("rate(ipcbench_suite_scenarios_completed_total", StringComparison.Ordinal) => value > 0,
                    _ when expression.Contains("ipcbench_suite_active", StringComparison.Ordinal) => value == 1,
                    _ when expression.Contains("ipcbench_suite_scenarios_done", StringComparison.Ordinal) => value >= 2 && value < 8,
                    _ when expression.Contains("ipcbench_suite_scenarios{", StringComparison.Ordinal) => value == 8,
                    _ => true,
                };
                if (!ok)
                {
                    failures.Add($"{expression} = {value} while suite {suite.Id} is running with {suite.ScenariosDone} of {suite.ScenariosTotal} done");
                }
            }

            Assert.True(failures.Count == 0,
                $"{failures.Count} suite queries failed:\n  - {string.Join("\n  - ", failures)}\n{daemon.Output.Describe()}\n--- prometheus ---\n{prometheus.Output.Describe()}");
        }
        finally
        {
            await daemon.Control.StopSuiteAsync(new StopSuiteRequest { Id = started.Id });
        }
    }

    /// <summary>
    /// The compare dashboard's Machines row against two real daemons, one Prometheus scraping both, each running the same
    /// scenario (uds, 1 KB, paced): late in both measured windows every query of the row has a finite series for
    /// each instance, and its CPU stays in range.
    /// </summary>
    [PrometheusFact]
    public async Task MachinesRowQueries_ShowEveryInstance_ForTheSameTransportAndPayload()
    {
        await using var first = await DaemonProcess.StartAsync();
        await using var second = await DaemonProcess.StartAsync();
        await using var prometheus = await PrometheusServer.StartAsync(first.MetricsPort, second.MetricsPort);
        await prometheus.WaitForTargetUpAsync(TimeSpan.FromSeconds(20));
        string[] instances = [$"127.0.0.1:{first.MetricsPort}", $"127.0.0.1:{second.MetricsPort}"];
        var queries = Dashboards.Files.SelectMany(Dashboards.Queries).Where(q => q.Where.Contains(" by machine'", StringComparison.Ordinal)).ToList();
        Assert.True(queries.Count == 4, $"the Machines row has {queries.Count} queries: {string.Join("; ", queries)}");

        var runs = await Task.WhenAll(new[] { first, second }.Select(daemon => daemon.RunScenarioAsync(
            Specs.Stream("uds", publishers: 1, subscribers: 1, Duration, Warmup, payloadBytes: 1024).Paced())));
        Assert.All(runs.Zip([first, second]), pair => new ScenarioExpectations(pair.First, pair.Second).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify());
        await UntilScrapedAsync(prometheus, $"ipcbench_scenario_end_time_seconds{{scenario=~\"{string.Join('|', runs.Select(r => r.Id))}\"}}",
            samples => samples.Count == runs.Length, "the end times of both scenarios");

        // Inside both measured windows: the earlier end, a little before it.
        var during = runs.Min(r => r.StartedAt.ToDateTimeOffset() + Warmup + Duration) - TimeSpan.FromSeconds(0.4);
        var values = new Dictionary<string, string>
        {
            ["instance"] = string.Join('|', instances),
            ["transport"] = "uds",
            ["payload"] = "1024",
            ["__rate_interval"] = RateInterval,
        };
        var failures = new List<string>();
        foreach (var query in queries)
        {
            var expression = Dashboards.Substitute(query.Expression, values);
            var samples = (await prometheus.QueryAsync(expression, during)).Where(s => double.IsFinite(s.Value)).ToList();
            output.WriteLine($"{query} -> {string.Join("; ", samples)}");
            foreach (var instance in instances)
            {
                var mine = samples.Where(s => s.Labels.GetValueOrDefault("instance") == instance).ToList();
                if (mine.Count == 0 || (query.Unit == "percent" && mine.Any(s => s.Value is < 0 or > 250)) || mine.All(s => s.Value <= 0))
                {
                    failures.Add($"{query}: for instance {instance} [{string.Join("; ", mine)}]\n      {expression}");
                }
            }
        }

        Assert.True(failures.Count == 0, $"{failures.Count} Machines row queries failed at {during:HH:mm:ss.fff}:\n  - {string.Join("\n  - ", failures)}\n" +
            $"--- prometheus ---\n{prometheus.Output.Describe()}");
    }

    /// <summary>
    /// Polls <paramref name="expression"/> at the current time until <paramref name="done"/> holds for what Prometheus
    /// answers; returns that time. The condition the test would otherwise sleep for, looked at rather than waited out.
    /// </summary>
    private static async Task<DateTimeOffset> UntilScrapedAsync(PrometheusServer prometheus, string expression, Func<IReadOnlyList<PromSample>, bool> done, string what)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            var now = DateTimeOffset.UtcNow;
            var samples = await prometheus.QueryAsync(expression, now);
            if (done(samples))
            {
                return now;
            }

            if (clock.Elapsed > TimeSpan.FromSeconds(30))
            {
                throw new Xunit.Sdk.XunitException($"Prometheus did not scrape {what} within 30 s: {expression} -> [{string.Join("; ", samples)}]\n{prometheus.Output.Describe()}");
            }

            await Task.Delay(200);
        }
    }
}
