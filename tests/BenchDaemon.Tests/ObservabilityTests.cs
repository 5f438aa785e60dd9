using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The shared daemon's /metrics under real runs: its format, its contents against the scenario's own result, and its cost
/// while a closed-loop run saturates the machine. Each observability setting on a daemon of its own (logs, systemd,
/// OTLP, the metrics port's configuration) is <see cref="ObservabilitySettingsTests"/>'.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class ObservabilityTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(20) };

    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Fact]
    public async Task Metrics_OfAFinishedScenario_MatchItsResult_InAValidExposition()
    {
        // A free-form name with everything a label value must escape.
        const string name = "lab \"A\" \\ run\nsecond line";
        var spec = Specs.Stream("uds", publishers: 2, subscribers: 2, Specs.Seconds(0.5), payloadBytes: 256).With(s =>
        {
            s.RatePerPublisher = 5000;
            s.Name = name;
        });
        var result = await _daemon.RunScenarioAsync(spec);
        new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 2).Verify();

        using var response = await Http.GetAsync(_daemon.MetricsUrl);
        var body = await response.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", response.Content.Headers.ContentType?.ToString());
        var metrics = MetricsText.Parse(body);
        var id = result.Id;
        var stats = result.Stats;
        var failures = new List<string>(metrics.Problems);
        void Expect(bool condition, string what)
        {
            if (!condition)
            {
                failures.Add(what);
            }
        }

        // Naming: ipcbench_ or the standard process_/dotnet_ families, counters _total, no pid among the labels.
        foreach (var (family, type) in metrics.Types)
        {
            Expect(family.StartsWith("ipcbench_", StringComparison.Ordinal) || family.StartsWith("process_", StringComparison.Ordinal)
                || family.StartsWith("dotnet_", StringComparison.Ordinal), $"{family}: unexpected prefix");
            Expect(type != "counter" || family.EndsWith("_total", StringComparison.Ordinal), $"counter {family} does not end in _total");
        }

        Expect(metrics.Samples.All(s => !s.Labels.ContainsKey("pid") && !s.Labels.ContainsKey("id")), "a sample is labelled with a pid or id");

        // The counters are the engine's: they add up to the scenario's result.
        Expect(metrics.Of("ipcbench_messages_sent_total", id).Sum(s => s.Value) == stats.MessagesSent,
            $"sent: {Sum(metrics, "ipcbench_messages_sent_total", id)} vs {stats.MessagesSent}");
        Expect(metrics.Of("ipcbench_messages_sent_total", id).Select(s => s.Label("publisher")).Order().SequenceEqual(["0", "1"]), "one sent counter per publisher");
        Expect(metrics.Of("ipcbench_messages_received_total", id).Sum(s => s.Value) == stats.MessagesReceived,
            $"received: {Sum(metrics, "ipcbench_messages_received_total", id)} vs {stats.MessagesReceived}");
        Expect(metrics.Of("ipcbench_received_bytes_total", id).Sum(s => s.Value) == stats.MessagesReceived * 256.0, "received bytes = received × payload");
        Expect(metrics.Of("ipcbench_messages_lost_total", id).Sum(s => s.Value) == stats.MessagesLost, "lost");
        Expect(metrics.Of("ipcbench_messages_corrupted_total", id).Sum(s => s.Value) == stats.MessagesCorrupted, "corrupted");
        Expect(metrics.Of("ipcbench_messages_received_total", id).All(s => s.Label("role") == "subscriber" && s.Label("transport") == "uds"), "received labels");

        Expect(metrics.Of("ipcbench_scenario_state", id).Single(s => s.Value == 1).Label("state") == "completed", "state completed is 1");
        Expect(metrics.Of("ipcbench_scenario_state", id).Count() == 8, "a series per state");
        // Offered deliveries per second: 5000 per publisher x 2 publishers x 2 subscribers each.
        Expect(metrics.Of("ipcbench_scenario_offered_messages_per_second", id).Single().Value == 20_000 &&
            metrics.Types["ipcbench_scenario_offered_messages_per_second"] == "gauge", "offered = 20000 deliveries/s, a gauge");
        var info = metrics.Of("ipcbench_scenario_info", id).Single();
        Expect(info.Value == 1 && info.Label("publishers") == "2" && info.Label("subscribers") == "2" && info.Label("payload_bytes") == "256"
            && info.Label("topology") == "all_to_all" && info.Label("mode") == "stream" && info.Label("rate_per_publisher") == "5000"
            && info.Label("name") == name, $"info: {info}");
        Expect(metrics.Of("ipcbench_scenario_start_time_seconds", id).Single().Value is var started
            && Math.Abs(started - result.StartedAt.ToDateTimeOffset().ToUnixTimeMilliseconds() / 1000.0) < 0.01, "start time");
        Expect(metrics.Of("ipcbench_scenario_end_time_seconds", id).Any(), "end time");
        Expect(Math.Abs(metrics.Of("ipcbench_scenario_measured_messages_per_second", id).Single().Value - stats.MessagesPerSecond) < 1e-6 * stats.MessagesPerSecond + 1,
            "measured msg/s is the result's");

        // The latency histogram: cumulative buckets, +Inf = count = the result's samples.
        var buckets = metrics.Of("ipcbench_latency_seconds_bucket", id).ToList();
        var count = metrics.Of("ipcbench_latency_seconds_count", id).Single().Value;
        Expect(buckets.Count > 10 && buckets[^1].Label("le") == "+Inf" && buckets[^1].Value == count, "+Inf bucket = count");
        Expect(buckets.Zip(buckets.Skip(1)).All(p => p.First.Value <= p.Second.Value), "buckets never decrease");
        Expect(buckets.SkipLast(1).Select(b => double.Parse(b.Label("le"), CultureInfo.InvariantCulture)).Zip(buckets.Skip(1).SkipLast(1)
            .Select(b => double.Parse(b.Label("le"), CultureInfo.InvariantCulture))).All(p => p.First < p.Second), "le ascending");
        Expect(count == stats.Latency.Samples, $"latency count {count} vs samples {stats.Latency.Samples}");
        Expect(metrics.Of("ipcbench_latency_seconds_sum", id).Single().Value > 0, "latency sum");
        // The buckets are the HDR histogram's: the one where half the samples are reached holds the result's p50.
        var p50 = StatsSeconds(stats.Latency.P50);
        int median = buckets.FindIndex(b => b.Value >= count / 2);
        double upper = double.Parse(buckets[median].Label("le"), CultureInfo.InvariantCulture);
        double lower = median == 0 ? 0 : double.Parse(buckets[median - 1].Label("le"), CultureInfo.InvariantCulture);
        Expect(p50 > lower * 0.999 && p50 <= upper * 1.001, $"p50 {p50} s is not in the median bucket ({lower}, {upper}]");

        // Each agent's own resource use, reported through the daemon.
        var cpu = metrics.Of("ipcbench_agent_cpu_seconds_total", id).ToList();
        Expect(cpu.Select(s => s.Label("subscriber")).Order().SequenceEqual(["0", "1"]) && cpu.All(s => s.Value > 0 && s.Label("role") == "agent"), "agent CPU");
        Expect(metrics.Of("ipcbench_agent_resident_memory_bytes", id).All(s => s.Value > 1_000_000), "agent RSS");
        Expect(metrics.Of("ipcbench_agent_gc_collections_total", id).Count() == 6, "agent GC counts for 3 generations × 2 agents");

        // The daemon itself and the build.
        Expect(metrics.Named("process_cpu_seconds_total").Single().Value > 0, "daemon CPU");
        Expect(metrics.Named("process_resident_memory_bytes").Single().Value > 1_000_000, "daemon RSS");
        var build = metrics.Named("ipcbench_build_info").Single();
        Expect(build.Label("iceoryx2_version") is "0.10.0" or "unavailable", $"iceoryx2_version {build.Label("iceoryx2_version")}");
        Expect(build.Label("dotnet_version").StartsWith(".NET ", StringComparison.Ordinal) && build.Label("cores") == Environment.ProcessorCount.ToString(CultureInfo.InvariantCulture)
            && build.Label("kernel").Length > 0 && build.Label("cpu_model").Length > 0 && build.Label("version").Length > 0, $"build info {build}");

        Assert.True(failures.Count == 0, $"{failures.Count} problem(s):\n  - {string.Join("\n  - ", failures)}\n--- /metrics ---\n{body}");
    }

    [Fact]
    public async Task MetricsPort_ServesOnlyGetMetrics()
    {
        using (var other = await Http.GetAsync(new Uri(_daemon.MetricsUrl, "/other")))
        {
            Assert.Equal(HttpStatusCode.NotFound, other.StatusCode);
        }

        using (var post = await Http.PostAsync(_daemon.MetricsUrl, new StringContent(string.Empty)))
        {
            Assert.Equal(HttpStatusCode.MethodNotAllowed, post.StatusCode);
        }

        using var head = await Http.SendAsync(new HttpRequestMessage(HttpMethod.Head, _daemon.MetricsUrl));
        Assert.Equal(HttpStatusCode.OK, head.StatusCode);
    }

    [PrometheusFact]
    public async Task Metrics_PassPromtoolCheckMetrics()
    {
        PrometheusTools.EnsureInstalled();
        // Something to show: a round-trip scenario too, so both latency kinds and publisher-side counters appear.
        await _daemon.RunScenarioAsync(Specs.Stream("tcp", 1, 1, Specs.Seconds(0.5)).With(s => s.Mode = Mode.RoundTrip));
        var body = await Http.GetStringAsync(_daemon.MetricsUrl);

        var (exitCode, lint) = await PrometheusTools.PromtoolAsync(body, "check", "metrics");

        Assert.True(exitCode == 0 && lint.Trim().Length == 0, $"promtool check metrics exited {exitCode}:\n{lint}\n--- /metrics ---\n{body}");
    }

    /// <summary>Scrapes are served from counters the engine keeps anyway: fast and small even while a run saturates the machine.</summary>
    [Fact]
    public async Task Scrapes_DuringAClosedLoopRun_AreFast_AndTheRunCompletesIntact()
    {
        var started = await _daemon.StartScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Seconds(3), payloadBytes: 1024));
        await _daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
        var times = new List<double>();
        int bytes = 0;
        for (int i = 0; i < 10; i++)
        {
            var clock = Stopwatch.StartNew();
            var body = await Http.GetStringAsync(_daemon.MetricsUrl);
            times.Add(clock.Elapsed.TotalMilliseconds);
            bytes = body.Length;
            Assert.Contains($"scenario=\"{started.Id}\"", body, StringComparison.Ordinal);
            await Task.Delay(200);
        }

        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));
        output.WriteLine($"scrape ms: {string.Join(", ", times.Select(t => t.ToString("0.0", CultureInfo.InvariantCulture)))}; {bytes} bytes");
        new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(1)
            // The first scrape of a process JITs the exposition code; later ones must be quick even on a busy 2-core machine.
            .Between(0, 250, times.Skip(1).Order().ElementAt(times.Count / 2 - 1), "median scrape milliseconds")
            .Between(1, 1_000_000, bytes, "exposition bytes")
            .Verify();
    }

    private static double StatsSeconds(Google.Protobuf.WellKnownTypes.Duration? duration) => duration is null ? 0 : duration.Seconds + duration.Nanos / 1e9;

    private static string Sum(MetricsText metrics, string name, string scenario) =>
        metrics.Of(name, scenario).Sum(s => s.Value).ToString(CultureInfo.InvariantCulture);
}
