using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Observability as configured, each on a daemon of its own: the JSON log file and its levels, systemd readiness
/// notification, OTLP export, the metrics port turned off, refused, left closed by `run`, and its series dropped once a
/// scenario is no longer recent. Contracts of files, messages and ports over paced BLOCK scenarios, so they run in the
/// light lane (<see cref="LightCollection"/>); what /metrics holds and costs under a closed-loop run is
/// <see cref="ObservabilityTests"/>' (the measuring lane, 2026-11-29: these took 44 of its 54 s there).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ObservabilitySettingsTests(ITestOutputHelper output)
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(20) };
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
