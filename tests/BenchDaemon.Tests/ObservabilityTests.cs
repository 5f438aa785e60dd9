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
/// The daemon's /metrics (format, contents against the scenario's own result, cost), its JSON log file, systemd
/// readiness notification and OTLP traces, each through the real daemon process.
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

    /// <summary>Label values stay bounded: a finished scenario beyond IpcBench:MetricsRecentScenarios leaves no series behind.</summary>
    [Fact]
    public async Task Metrics_DropAFinishedScenario_OnceItIsNoLongerRecent()
    {
        await using var daemon = await DaemonProcess.StartAsync("--IpcBench:MetricsRecentScenarios=1");
        using var log = daemon.LogTo(output);
        // In-process scenarios: which series a scenario leaves does not depend on its transport.
        var first = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Seconds(0.2)).Paced());
        var before = MetricsText.Parse(await Http.GetStringAsync(daemon.MetricsUrl));
        Assert.Contains(before.Samples, s => s.Label("scenario") == first.Id && s.Name == "ipcbench_latency_seconds_count");

        var second = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Seconds(0.2)).Paced());
        // The second is exported as finished once its run has wound down, shortly after its final state.
        var after = before;
        await Poll.UntilAsync(() =>
        {
            after = MetricsText.Parse(Http.GetStringAsync(daemon.MetricsUrl).GetAwaiter().GetResult());
            return after.Named("ipcbench_scenarios_running").Single().Value == 0;
        }, TimeSpan.FromSeconds(10), () => "the second scenario is still running");

        Assert.Empty(after.Problems);
        Assert.DoesNotContain(after.Samples, s => s.Label("scenario") == first.Id);
        Assert.Equal(second.Stats.MessagesReceived, after.Of("ipcbench_messages_received_total", second.Id).Sum(s => s.Value));
        Assert.Equal(second.Stats.Latency.Samples, after.Of("ipcbench_latency_seconds_count", second.Id).Single().Value);
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

    [Fact]
    public async Task JsonLogFile_CarriesTheScenarioIdOnScenarioLines_AndAgentsUnderTheirOwnIdentity()
    {
        var file = Path.Combine(Path.GetTempPath(), "ipcbench-tests", $"log-{Guid.NewGuid():N}.json");
        try
        {
            string id;
            await using (var daemon = await DaemonProcess.StartAsync($"--IpcBench:JsonLogFile={file}"))
            {
                using var log = daemon.LogTo(output);
                var result = await daemon.RunScenarioAsync(Specs.Stream("uds", 1, 2, Specs.Seconds(0.3)).Paced());
                new ScenarioExpectations(result, daemon).CompletedWithoutLoss(2).Verify();
                id = result.Id;
                Assert.True(await daemon.TerminateAsync(TimeSpan.FromSeconds(10)), "the daemon did not stop on SIGTERM");
            }

            var lines = File.ReadAllLines(file);
            var events = lines.Select(l => JsonDocument.Parse(l).RootElement.Clone()).ToList();
            // CLEF as Serilog.Formatting.Compact writes it: the template and its properties, which readers render.
            Assert.All(events, e =>
            {
                Assert.True(e.TryGetProperty("@t", out _) && e.TryGetProperty("@mt", out _), e.ToString());
            });
            static string Text(JsonElement e, string name) => e.TryGetProperty(name, out var v) ? v.ToString() : string.Empty;
            static bool Mentions(JsonElement e, string text) =>
                e.EnumerateObject().Any(p => p.Name is not ("@t" or "@mt") && p.Value.ToString().Contains(text, StringComparison.Ordinal));

            var scenarioLines = events.Where(e => Text(e, "SourceContext") == "IpcBench.Scenario" && Text(e, "@mt").StartsWith("Scenario {ScenarioId}", StringComparison.Ordinal)).ToList();
            Assert.True(scenarioLines.Count >= 4, $"scenario lines: {scenarioLines.Count}\n{string.Join('\n', lines)}");
            Assert.All(scenarioLines, e => Assert.Equal(id, Text(e, "ScenarioId")));
            // Every event logged inside the scenario's scope carries its id: nothing else names one (in its message's
            // properties or any other).
            Assert.All(events.Where(e => Mentions(e, id)), e => Assert.Equal(id, Text(e, "ScenarioId")));
            // The scenario runs outside the StartScenario request: its lines do not pretend to belong to it.
            Assert.All(scenarioLines, e => Assert.False(e.TryGetProperty("RequestPath", out _), e.ToString()));

            var agentLines = events.Where(e => e.TryGetProperty("AgentLine", out _)).ToList();
            Assert.Equal(["0", "1"], agentLines.Select(e => Text(e, "AgentIndex")).Distinct().Order());
            Assert.All(agentLines, e =>
            {
                Assert.Equal(id, Text(e, "ScenarioId"));
                Assert.True(int.Parse(Text(e, "AgentPid"), CultureInfo.InvariantCulture) > 0, e.ToString());
            });
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public async Task LogLevels_ComeFromSerilogConfiguration()
    {
        var file = Path.Combine(Path.GetTempPath(), "ipcbench-tests", $"log-{Guid.NewGuid():N}.json");
        try
        {
            await using (var daemon = await DaemonProcess.StartAsync($"--IpcBench:JsonLogFile={file}", "--Serilog:MinimumLevel:Override:IpcBench.Scenario=Warning"))
            {
                using var log = daemon.LogTo(output);
                // In process: the levels are the daemon's own configuration, agents add nothing to it.
                var result = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Seconds(0.2)).Paced());
                new ScenarioExpectations(result, daemon).CompletedWithoutLoss(1).Verify();
                Assert.True(await daemon.TerminateAsync(TimeSpan.FromSeconds(10)), "the daemon did not stop on SIGTERM");
            }

            var events = File.ReadAllLines(file).Select(l => JsonDocument.Parse(l).RootElement.Clone()).ToList();
            static string Source(JsonElement e) => e.TryGetProperty("SourceContext", out var v) ? v.ToString() : string.Empty;
            // The daemon's other sources still log at Information; the scenario's Information lines are gone.
            Assert.Contains(events, e => Source(e) == "IpcBench.Daemon.Persistence.StoreWriter");
            Assert.DoesNotContain(events, e => Source(e) == "IpcBench.Scenario" && !e.TryGetProperty("@l", out _));
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Theory]
    [InlineData("path")]
    [InlineData("abstract")]
    public async Task SystemdNotify_ReadyOnceServing_StoppingOnSigterm(string kind)
    {
        var name = $"ipcbench-notify-{Guid.NewGuid():N}"[..30];
        var path = Path.Combine(Path.GetTempPath(), name);
        string notifySocket = kind == "abstract" ? "@" + name : path;
        using var socket = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        socket.Bind(new UnixDomainSocketEndPoint(kind == "abstract" ? "\0" + name : path));
        try
        {
            await using var daemon = await DaemonProcess.StartAsync(new Dictionary<string, string?> { ["NOTIFY_SOCKET"] = notifySocket });
            using var log = daemon.LogTo(output);
            var ready = await ReceiveAsync(socket, TimeSpan.FromSeconds(10));
            Assert.Contains("READY=1", ready.Split('\n'));
            // Ready means listening: the metrics port answers.
            Assert.Equal(HttpStatusCode.OK, (await Http.GetAsync(daemon.MetricsUrl)).StatusCode);

            Assert.True(await daemon.TerminateAsync(TimeSpan.FromSeconds(10)), "the daemon did not stop on SIGTERM");
            var stopping = await ReceiveAsync(socket, TimeSpan.FromSeconds(5));
            Assert.Contains("STOPPING=1", stopping.Split('\n'));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public async Task Otlp_WhenTheEndpointIsSet_ExportsControlCallsScenarioPhasesAndRuntimeMetrics()
    {
        await using var collector = OtlpHttpCollector.Start();
        string id;
        await using (var daemon = await DaemonProcess.StartAsync(new Dictionary<string, string?>
        {
            ["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.Endpoint,
            ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
            ["OTEL_BSP_SCHEDULE_DELAY"] = "200",
            ["OTEL_METRIC_EXPORT_INTERVAL"] = "500",
        }))
        {
            using var log = daemon.LogTo(output);
            var result = await daemon.RunScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Seconds(0.3), Specs.Seconds(0.2)).Paced());
            id = result.Id;
            await daemon.ListTransportsAsync();
            // Until the periodic exports have carried the last call and the runtime metrics (instead of a fixed wait);
            // shutdown then flushes what is still batched.
            await Poll.UntilAsync(
                () => collector.Received("/v1/traces").Contains("/ipcbench.v1.BenchControl/ListTransports", StringComparison.Ordinal)
                    && ((string[])["dotnet.gc.collections", "http.server.request.duration", "kestrel.active_connections"])
                        .All(m => collector.Received("/v1/metrics").Contains(m, StringComparison.Ordinal)),
                TimeSpan.FromSeconds(20), () => "the collector did not receive the ListTransports span and the runtime metrics within 20 s");
            Assert.True(await daemon.TerminateAsync(TimeSpan.FromSeconds(10)), "the daemon did not stop on SIGTERM");
        }

        // OTLP/protobuf carries strings as UTF-8 bytes: enough to find span names and attributes without the protos.
        var traces = collector.Received("/v1/traces");
        var metrics = collector.Received("/v1/metrics");
        output.WriteLine($"{traces.Length} bytes of traces, {metrics.Length} bytes of metrics");
        foreach (var expected in (string[])["ipcbench-daemon", "ipcbench.v1.BenchControl/StartScenario", "ipcbench.v1.BenchControl/GetScenario",
            "ipcbench.v1.BenchControl/ListTransports", "scenario", "start", "agents up", "warmup", "run", "stop", id])
        {
            Assert.True(traces.Contains(expected, StringComparison.Ordinal), $"no '{expected}' in the exported traces");
        }

        // Control calls are ASP.NET Core server spans (the instrumentation's url.path and rpc.* attributes; which names
        // it uses for the system and the status depends on its semantic-convention opt-in); the agents' own link is
        // filtered out, its reports would bury the calls.
        foreach (var expected in (string[])["url.path", "/ipcbench.v1.BenchControl/ListTransports", "rpc.system", "rpc.method"])
        {
            Assert.True(traces.Contains(expected, StringComparison.Ordinal), $"no '{expected}' in the exported traces");
        }

        Assert.True(traces.Contains("rpc.grpc.status_code", StringComparison.Ordinal) || traces.Contains("rpc.response.status_code", StringComparison.Ordinal),
            "no gRPC status attribute (rpc.grpc.status_code or rpc.response.status_code) in the exported traces");

        Assert.False(traces.Contains("ipcbench.v1.AgentLink", StringComparison.Ordinal), "the agent link is traced");

        foreach (var expected in (string[])["dotnet.gc.collections", "http.server.request.duration", "kestrel.active_connections"])
        {
            Assert.True(metrics.Contains(expected, StringComparison.Ordinal), $"no '{expected}' in the exported metrics");
        }
    }

    [Fact]
    public async Task Daemon_WithoutMetricsAddress_OpensNoMetricsPort_AndRefusesABadOne()
    {
        await using (var daemon = await DaemonProcess.StartAsync("--IpcBench:MetricsAddress="))
        {
            await Assert.ThrowsAsync<HttpRequestException>(() => Http.GetAsync(daemon.MetricsUrl));
        }

        var error = await Assert.ThrowsAnyAsync<Exception>(() => DaemonProcess.StartAsync("--IpcBench:MetricsAddress=nowhere"));
        Assert.Contains("IpcBench:MetricsAddress 'nowhere'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task RunCommand_DoesNotOpenTheMetricsPort()
    {
        var directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "run-" + Guid.NewGuid().ToString("N")[..10]);
        int port = FreePort();
        var start = new ProcessStartInfo(RepoLayout.DaemonExecutable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        // Starting the process alone takes longer than the few refused connections asked for below.
        foreach (var argument in (string[])["run", "--transports", "uds", "--payloads", "64", "--duration", "500ms", "--warmup", "0s", "--rate", "2000", "--wait", "block",
            "--out", Path.Combine(directory, "out"), $"--IpcBench:RuntimeDirectory={Path.Combine(directory, "runtime")}", $"--IpcBench:MetricsAddress=127.0.0.1:{port}",
            $"--IpcBench:DatabasePath={Path.Combine(directory, "scenarios.db")}"])
        {
            start.ArgumentList.Add(argument);
        }

        var log = new OutputLog();
        using var process = log.Start(start);
        int refused = 0;
        try
        {
            while (!process.HasExited)
            {
                using var client = new TcpClient();
                try
                {
                    await client.ConnectAsync(IPAddress.Loopback, port);
                    Assert.Fail($"`run` listens on the metrics port {port}\n{log.Describe()}");
                }
                catch (SocketException)
                {
                    refused++;
                }

                await Task.Delay(100);
            }

            await process.WaitForExitAsync();
            Assert.True(process.ExitCode == 0, $"run exited with {process.ExitCode}\n{log.Describe()}");
            Assert.True(refused > 5, $"only {refused} connection attempts while `run` ran");
        }
        finally
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }

            if (Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }

    private static double StatsSeconds(Google.Protobuf.WellKnownTypes.Duration? duration) => duration is null ? 0 : duration.Seconds + duration.Nanos / 1e9;

    private static string Sum(MetricsText metrics, string name, string scenario) =>
        metrics.Of(name, scenario).Sum(s => s.Value).ToString(CultureInfo.InvariantCulture);

    private static async Task<string> ReceiveAsync(Socket socket, TimeSpan timeout)
    {
        var buffer = new byte[4096];
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            int length = await socket.ReceiveAsync(buffer, SocketFlags.None, cancel.Token);
            return Encoding.UTF8.GetString(buffer, 0, length);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"no notification within {timeout.TotalSeconds:0} s");
        }
    }

    private static int FreePort() => OtlpHttpCollector.FreePort();
}
