using IpcBench.Workload;
using System.Globalization;
using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using IpcBench.Workload.Placement;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// What a result says about where it ran and how busy the machine was, read back as users read it: grpcurl's
/// GetScenario, the CSV export and /metrics of a real daemon and agent. Rate-limited and short: nothing spins.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class PlacementResultTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(20) };

    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    /// <summary>CPUs 0 and 1 when the daemon may use both (the usual case); else the first two it may use.</summary>
    private static (int Publisher, int Subscriber) TwoCpus()
    {
        var allowed = AllowedCpus.OfThisProcess().Allowed;
        if (allowed.Contains(0) && allowed.Contains(1))
        {
            return (0, 1);
        }

        return (allowed.Cpus[0], allowed.Cpus[allowed.Count > 1 ? 1 : 0]);
    }

    [GrpcurlFact]
    public async Task PinnedScenario_ReadsBackPlacementTopologyProbeNoiseAndSenderLag()
    {
        var (pub, sub) = TwoCpus();
        var started = JsonDocument.Parse(await GrpcurlAsync(
            ["-d", $$$"""{"spec":{"transport":"uds","publishers":1,"subscribers":1,"payload_bytes":64,"duration":"2s","warmup":"500ms","rate_per_publisher":2000,"wait_strategy":"WAIT_STRATEGY_BLOCK","publisher_cpus":"{{{pub}}}","subscriber_cpus":"{{{sub}}}"}}"""],
            "ipcbench.v1.BenchControl/StartScenario"));
        string id = started.RootElement.GetProperty("id").GetString()!;
        await _daemon.WaitUntilFinishedAsync(id, TimeSpan.FromSeconds(30));

        using var result = JsonDocument.Parse(await GrpcurlAsync(["-d", $"{{\"id\":\"{id}\"}}"], "ipcbench.v1.BenchControl/GetScenario"));
        var scenario = result.RootElement;
        Assert.Equal("SCENARIO_STATE_COMPLETED", scenario.GetProperty("state").GetString());
        var environment = scenario.GetProperty("environment");
        var placement = environment.GetProperty("placement");
        Assert.Equal(Invariant(pub), placement.GetProperty("publisher_cpus").GetString());
        Assert.Equal(Invariant(sub), placement.GetProperty("subscriber_cpus").GetString());

        // The topology facts are this machine's own /sys, for exactly those two CPUs.
        var topology = new CpuTopology();
        var pubCpu = topology.Describe(pub);
        var subCpu = topology.Describe(sub);
        Assert.Equal($"{pub}:{pubCpu.SmtSiblings?.ToString() ?? "unknown"} {sub}:{subCpu.SmtSiblings?.ToString() ?? "unknown"}",
            placement.GetProperty("smt_siblings").GetString());
        Assert.Equal($"{pub}:{pubCpu.NumaNode} {sub}:{subCpu.NumaNode}", placement.GetProperty("numa_nodes").GetString());
        var relation = topology.Relate(pub, sub);
        if (relation.SamePhysicalCore is { } sameCore)
        {
            Assert.Equal(sameCore, placement.GetProperty("same_physical_core").GetBoolean());
        }
        else
        {
            Assert.False(placement.TryGetProperty("same_physical_core", out _), placement.ToString());
        }

        // grpcurl leaves an empty list out.
        var sharedCaches = placement.TryGetProperty("shared_caches", out var caches) ? caches.EnumerateArray().Select(c => c.GetString()!).ToList() : [];
        Assert.Equal(relation.SharedCaches, sharedCaches);
        Assert.Equal(MachineTuning.SelectedMode(SysText("/sys/kernel/mm/transparent_hugepage/enabled")), placement.GetProperty("transparent_huge_pages").GetString());
        Assert.False(string.IsNullOrEmpty(placement.GetProperty("cgroup_cpu_quota").GetString()), placement.ToString());
        Assert.False(string.IsNullOrEmpty(placement.GetProperty("cpufreq_governor").GetString()), placement.ToString());

        // The probe ran between the chosen CPUs, not a pair of its own.
        if (pub != sub)
        {
            // The probe gives up on a machine too busy for it to finish within 2 s; it still names its pair.
            Assert.StartsWith($"{pub}<->{sub}", environment.GetProperty("core_to_core_cores").GetString(), StringComparison.Ordinal);
        }

        var stats = scenario.GetProperty("stats");
        double noise = stats.GetProperty("noise_percent").GetDouble();
        Assert.InRange(noise, 0, 100);
        Assert.InRange(stats.GetProperty("warmup_noise_percent").GetDouble(), 0, 100);
        Assert.True(stats.GetProperty("load_average_1m").GetDouble() >= 0, stats.ToString());
        var lag = stats.GetProperty("sender_lag");
        Assert.True(ulong.Parse(lag.GetProperty("samples").GetString()!, CultureInfo.InvariantCulture) > 0, lag.ToString());
        Assert.True(lag.TryGetProperty("p99", out _) && lag.TryGetProperty("max", out _), lag.ToString());

        // The CSV export carries the same figures in its new columns.
        var export = await _daemon.ExportScenariosAsync(new ExportScenariosRequest { Ids = { id }, Format = ExportFormat.Csv });
        var csv = CsvTable.Parse(export.Content);
        var row = Assert.Single(csv.Rows);
        Assert.Equal(Invariant(pub), csv.Get(row, "publisher_cpus"));
        Assert.Equal(Invariant(sub), csv.Get(row, "subscriber_cpus"));
        Assert.Equal(noise, double.Parse(csv.Get(row, "noise_percent"), CultureInfo.InvariantCulture));
        Assert.True(long.Parse(csv.Get(row, "sender_lag_samples"), CultureInfo.InvariantCulture) > 0, string.Join(',', row));
        Assert.NotEqual(string.Empty, csv.Get(row, "sender_lag_p99_ns"));
        Assert.Contains(csv.Get(row, "sender_lag_dominates"), new[] { "true", "false" });
        Assert.Equal(string.Join(';', relation.SharedCaches), csv.Get(row, "shared_caches"));

        // /metrics: the noise share as a 0..1 ratio and the sender-lag histogram, labelled as the other scenario series.
        using var response = await Http.GetAsync(_daemon.MetricsUrl);
        var metrics = MetricsText.Parse(await response.Content.ReadAsStringAsync());
        Assert.Empty(metrics.Problems);
        var ratio = Assert.Single(metrics.Of("ipcbench_scenario_noise_ratio", id));
        Assert.Equal(noise / 100, ratio.Value, 9);
        Assert.Equal("gauge", metrics.Types["ipcbench_scenario_noise_ratio"]);
        Assert.Equal("histogram", metrics.Types["ipcbench_sender_lag_seconds"]);
        Assert.True(Assert.Single(metrics.Of("ipcbench_sender_lag_seconds_count", id)).Value > 0);
    }

    [Fact]
    public async Task MaxNoisePercent_ExceededByABusySideProcess_FailsNamingMeasuredAndAllowed()
    {
        // Two busy loops, so others' share of a two-CPU machine is far above the bound whatever else runs.
        using var busy = new BusyProcesses(2);
        // In-process channels: noise is what other processes take, whichever transport measures beside them.
        var spec = Specs.Stream("channels", publishers: 1, subscribers: 1, Specs.Seconds(0.5), Specs.Milliseconds(200))
            .With(s =>
            {
                s.RatePerPublisher = 1000;
                s.WaitStrategy = WaitStrategy.Block;
                s.MaxNoisePercent = 0.001;
            });

        var started = await _daemon.StartScenarioAsync(spec);
        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));

        output.WriteLine(result.Error);
        Assert.Equal(ScenarioState.Failed, result.State);
        Assert.StartsWith("max_noise_percent: other processes used ", result.Error, StringComparison.Ordinal);
        Assert.EndsWith("of the machine's CPU during the measured window, above the allowed 0.001%", result.Error, StringComparison.Ordinal);
        // The figures measured are kept with the failure.
        Assert.True(result.Stats.HasNoisePercent && result.Stats.NoisePercent > 0.001, result.Stats.ToString());
        Assert.True(result.Stats.MessagesReceived > 0, result.Stats.ToString());
    }

    [Fact]
    public async Task UnpinnedScenario_SaysUnpinned_AndWhichPairTheProbeUsed()
    {
        var spec = Specs.Stream("channels", publishers: 1, subscribers: 1, Specs.Seconds(0.3), Specs.Milliseconds(100))
            .With(s => s.RatePerPublisher = 1000);

        var started = await _daemon.StartScenarioAsync(spec);
        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));

        Assert.Equal(ScenarioState.Completed, result.State);
        Assert.Equal("unpinned", result.Environment.Placement.PublisherCpus);
        Assert.Equal("unpinned", result.Environment.Placement.SubscriberCpus);
        Assert.False(result.Environment.Placement.HasSamePhysicalCore);
        Assert.Empty(result.Environment.Placement.SharedCaches);
        if (Environment.ProcessorCount > 1)
        {
            // The pair it probed, or meant to probe when the machine was too busy for it to finish.
            Assert.True(result.Environment.CoreToCoreCores is "unpinned" || result.Environment.CoreToCoreCores.StartsWith("0<->1", StringComparison.Ordinal),
                result.Environment.CoreToCoreCores);

            // The same pair probed again after the window, so a run the host moved is told apart (PLACEMENT_MOVED).
            if (result.Environment.CoreToCoreRoundTrip is not null)
            {
                Assert.NotNull(result.Environment.CoreToCoreRoundTripAfter);
                Assert.InRange(result.Environment.CoreToCoreRoundTripAfter.Nanos, 1, 100_000_000);
                var moved = result.Stats.Validity.FirstOrDefault(v => v.Kind == V1.ValidityKind.PlacementMoved);
                bool byProbes = moved is not null && moved.Detail.StartsWith("probes: ", StringComparison.Ordinal);
                long before = result.Environment.CoreToCoreRoundTrip.Nanos, after = result.Environment.CoreToCoreRoundTripAfter.Nanos;
                // What the check used: the classes learned from the daemon's probe history, or the 2x rule before there were enough probes.
                string classes = result.Environment.PlacementClasses;
                Assert.NotEmpty(classes);
                if (classes.StartsWith("placement classes not learned yet", StringComparison.Ordinal))
                {
                    Assert.Equal(Math.Max(before, after) >= 2 * Math.Min(before, after), byProbes);
                }
                else if (byProbes)
                {
                    Assert.Contains(classes, moved!.Detail, StringComparison.Ordinal);
                }
            }
        }

        // The clock every latency is read with, as the kernel names it, and what one read costs (above 0, and far
        // below the 1 ms a broken measurement would show).
        Assert.Equal(ClockProbe.ReadSource(), result.Environment.ClockSource);
        Assert.NotNull(result.Environment.ClockRead);
        Assert.InRange(result.Environment.ClockRead.Nanos + result.Environment.ClockRead.Seconds * 1_000_000_000L, 1, 1_000_000);
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string? SysText(string path) => File.Exists(path) ? File.ReadAllText(path).Trim() : null;

    private async Task<string> GrpcurlAsync(string[] flags, params string[] command)
    {
        var result = await GrpcurlRunner.RunAsync(["-plaintext", .. flags, _daemon.Address, .. command]);
        output.WriteLine($"$ {result.CommandLine}\n{result.Stdout}{result.Stderr}");
        Assert.True(result.ExitCode == 0, $"{result.CommandLine} exited with {result.ExitCode}: {result.Stderr}\n{_daemon.Output.Describe()}");
        return result.Stdout;
    }
}
