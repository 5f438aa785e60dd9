using System.Globalization;
using System.Text;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using IpcBench.V1;

namespace IpcBench.Daemon.Run;

/// <summary>Markdown tables of a run: a msg/s grid shaped like the published tables per payload access, then every figure per scenario.</summary>
public static class ResultTables
{
    public static string Render(IReadOnlyList<Scenario> results)
    {
        var text = new StringBuilder();
        foreach (var group in results.GroupBy(r => (r.Spec.PayloadAccess, r.Spec.Publishers, r.Spec.Subscribers, r.Spec.Topology, r.Spec.Mode)))
        {
            var transports = group.Select(r => r.Spec.Transport).Distinct().ToList();
            var payloads = group.Select(r => r.Spec.PayloadBytes).Distinct().Order().ToList();
            text.AppendLine(CultureInfo.InvariantCulture,
                $"### Throughput, msg/s — {RunCommand.AccessName(group.Key.PayloadAccess)}, {group.Key.Publishers}:{group.Key.Subscribers} {Topology(group.Key.Topology)}, {ModeName(group.Key.Mode)}");
            text.AppendLine();
            text.AppendLine("| Payload | " + string.Join(" | ", transports) + " |");
            text.AppendLine("|---|" + string.Concat(transports.Select(_ => "---|")));
            foreach (var payload in payloads)
            {
                var cells = transports.Select(t => group.FirstOrDefault(r => r.Spec.Transport == t && r.Spec.PayloadBytes == payload) is { } r
                    ? (r.State == ScenarioState.Failed ? "failed" : Count(r.Stats.MessagesPerSecond))
                    : "–");
                text.AppendLine($"| {Bytes(payload)} | " + string.Join(" | ", cells) + " |");
            }

            text.AppendLine();
        }

        text.AppendLine("### Every scenario");
        text.AppendLine();
        text.AppendLine("| Transport | Payload | N:M | Access | Wait | msg/s | MB/s | CPU daemon | CPU agents | p50 | p99 | Latency | Sender lag p99 | Sent | Lost | Corrupt | Core↔core | noise % | State |");
        text.AppendLine("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        foreach (var r in results)
        {
            var stats = r.Stats ?? new ScenarioStats();
            var daemon = stats.Processes.FirstOrDefault(p => p.Role == "daemon");
            var agents = stats.Processes.Where(p => p.Role == "agent").ToList();
            string agentCpu = agents.Count == 0 ? "in-process" : string.Join(" + ", agents.Select(a => Percent(a.CpuPercent)));
            text.AppendLine(
                $"| {r.Spec.Transport} | {Bytes(r.Spec.PayloadBytes)} | {r.Spec.Publishers}:{r.Spec.Subscribers} | {RunCommand.AccessName(r.Spec.PayloadAccess)} | " +
                $"{WaitName(r.Spec.WaitStrategy)} | {Count(stats.MessagesPerSecond)} | {stats.BytesPerSecond / 1e6:0.#} | {Percent(daemon?.CpuPercent ?? 0)} | {agentCpu} | " +
                $"{Micros(stats.Latency?.P50)} | {Micros(stats.Latency?.P99)} | {LatencyName(stats.Latency?.Kind)} | {SenderLag(stats.SenderLag)} | {stats.MessagesSent} | {stats.MessagesLost} | {stats.MessagesCorrupted} | " +
                $"{Nanos(r.Environment?.CoreToCoreRoundTrip)} | {Noise(stats)} | {r.State.ToString().ToUpperInvariant()}{(string.IsNullOrEmpty(r.Error) ? string.Empty : ": " + r.Error)} |");
        }

        if (results.FirstOrDefault()?.Environment is { } env)
        {
            text.AppendLine();
            text.AppendLine(
                $"Machine: {env.CpuModel}, {env.LogicalCores} logical cores, kernel {env.Kernel}, {env.DotnetVersion}. CPU % is of one core over the measured window; " +
                "latency is HDR percentile of one-way (send→receive) or round-trip time in µs.");
            text.AppendLine();
            text.AppendLine(
                $"noise % is other processes' CPU as a share of the machine over the measured window (⚠ above {ValidityRules.DefaultNoiseLimitPercent:0} %); sender lag " +
                $"(rate-limited runs) is how late messages left against their intended time in µs, ⚠ where its p99 is over {RunStats.SenderLagDominatesShare:P0} of latency p99.");
        }

        text.Append(JitLine(results));
        var invalid = results.Where(r => r.Stats is { Validity.Count: > 0 }).ToList();
        if (invalid.Count > 0)
        {
            text.AppendLine();
            text.AppendLine("Invalid results (kept above; comparisons call them inconclusive):");
            foreach (var r in invalid)
            {
                text.AppendLine($"- {r.Spec.Transport} {Bytes(r.Spec.PayloadBytes)} {r.Spec.Publishers}:{r.Spec.Subscribers} ({r.Id}): " +
                    string.Join("; ", ScenarioProtos.FromProto(r.Stats).Validity.Select(v => v.Text)));
            }
        }

        foreach (var placement in results.Select(r => r.Environment).Where(e => e?.Placement is not null).Select(e => Placement(e!)).Distinct())
        {
            text.AppendLine();
            text.AppendLine(placement);
        }

        return text.ToString();
    }

    public static string Count(double value) => value switch
    {
        >= 1e6 => (value / 1e6).ToString("0.00", CultureInfo.InvariantCulture) + " M",
        >= 1e3 => (value / 1e3).ToString("0.0", CultureInfo.InvariantCulture) + " K",
        _ => value.ToString("0", CultureInfo.InvariantCulture),
    };

    public static string Bytes(int bytes) => bytes switch
    {
        >= 1024 * 1024 when bytes % (1024 * 1024) == 0 => $"{bytes / (1024 * 1024)} MB",
        >= 1024 when bytes % 1024 == 0 => $"{bytes / 1024} KB",
        _ => $"{bytes} B",
    };

    private static string Noise(ScenarioStats stats) =>
        !stats.HasNoisePercent ? "–"
        : stats.NoisePercent.ToString("0.0", CultureInfo.InvariantCulture) + (stats.NoisePercent > ValidityRules.DefaultNoiseLimitPercent ? " ⚠ noisy" : string.Empty);


    private static string SenderLag(SenderLagStats? lag) =>
        lag is null ? "–" : Micros(lag.P99) + (lag.Dominates ? " ⚠" : string.Empty);

    /// <summary>The environment block: where the hot loops ran and what relates those CPUs.</summary>
    private static string Placement(EnvironmentInfo env)
    {
        var p = env.Placement;
        string sameCore = p.HasSamePhysicalCore ? (p.SamePhysicalCore ? "yes" : "no") : "–";
        string caches = p.SharedCaches.Count == 0 ? "none" : string.Join(", ", p.SharedCaches);
        return $"Placement: publishers on {p.PublisherCpus}, subscribers on {p.SubscriberCpus}; probe pair {env.CoreToCoreCores} (its round trip per scenario above); " +
            $"same physical core {sameCore}, shared caches {caches}; SMT {p.Smt} (siblings {p.SmtSiblings}); NUMA {p.NumaNodes}; " +
            $"cpufreq {p.CpufreqDriver}/{p.CpufreqGovernor}; isolated [{p.IsolatedCpus}], nohz_full [{p.NohzFullCpus}]; cgroup quota {p.CgroupCpuQuota}; THP {p.TransparentHugePages}" +
            (env.ClockSource.Length > 0 ? $"; clock {env.ClockSource}, {Nanos(env.ClockRead)} a read." : ".");
    }

    /// <summary>Whether the JIT compiled anything while scenarios measured (first compilations or tier-ups), summed over processes.</summary>
    private static string JitLine(IReadOnlyList<Scenario> results)
    {
        var jit = results.Select(r => (Methods: r.Stats?.Processes.Sum(p => p.JitCompiledMethods) ?? 0,
            Seconds: r.Stats?.Processes.Sum(p => p.JitTime?.ToTimeSpan().TotalSeconds ?? 0) ?? 0)).ToList();
        int withJit = jit.Count(j => j.Methods > 0);
        return withJit == 0
            ? Environment.NewLine + "JIT during the measured windows: no method compiled." + Environment.NewLine
            : Environment.NewLine + $"JIT during the measured windows: {jit.Sum(j => j.Methods)} methods compiled in {withJit} of {jit.Count} scenarios, " +
              $"{jit.Sum(j => j.Seconds) * 1000:0.#} ms of compilation (per process in results.json: jit_compiled_methods, jit_time)." + Environment.NewLine;
    }

    private static string Percent(double value) => value.ToString("0", CultureInfo.InvariantCulture) + " %";

    private static string Micros(Google.Protobuf.WellKnownTypes.Duration? duration) =>
        duration is null ? "–" : ((double)ScenarioProtos.ToNanoseconds(duration) / 1000).ToString("0.0", CultureInfo.InvariantCulture);

    private static string Nanos(Google.Protobuf.WellKnownTypes.Duration? duration) =>
        duration is null ? "–" : ((double)ScenarioProtos.ToNanoseconds(duration)).ToString("0", CultureInfo.InvariantCulture) + " ns";

    private static string Topology(Topology topology) => topology == V1.Topology.Paired ? "paired" : "all-to-all";

    private static string ModeName(Mode mode) => mode == Mode.RoundTrip ? "round trip" : "stream";

    private static string LatencyName(LatencyKind? kind) => kind == LatencyKind.RoundTrip ? "RTT" : "one-way";

    private static string WaitName(WaitStrategy strategy) => strategy.ToString().ToLowerInvariant();
}
