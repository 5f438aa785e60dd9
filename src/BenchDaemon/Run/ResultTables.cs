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
                $"### Throughput, msg/s — {AccessName(group.Key.PayloadAccess)}, {group.Key.Publishers}:{group.Key.Subscribers} {Topology(group.Key.Topology)}, {ModeName(group.Key.Mode)}");
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
                $"| {r.Spec.Transport} | {Bytes(r.Spec.PayloadBytes)} | {r.Spec.Publishers}:{r.Spec.Subscribers} | {AccessName(r.Spec.PayloadAccess)} | " +
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

        foreach (var placement in PlacementLines(results))
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

    /// <summary>
    /// Where the hot loops ran and what relates those CPUs, said once: the first scenario's facts (with the clock read's
    /// cost over every scenario on that clock as a range, since it moves a few ns run to run), then, for the scenarios
    /// whose facts differ from the first's, only those that differ, scenarios with the same differences on one line.
    /// </summary>
    public static IReadOnlyList<string> PlacementLines(IReadOnlyList<Scenario> results)
    {
        var placed = results.Where(r => r.Environment?.Placement is not null).ToList();
        if (placed.Count == 0)
        {
            return [];
        }

        var first = placed[0].Environment;
        var facts = PlacementFacts(first);
        var sameClock = placed.Select(r => r.Environment).Where(e => e.ClockSource == first.ClockSource).ToList();
        var text = new StringBuilder("Placement: ").Append(facts[0].Text);
        foreach (var fact in facts.Skip(1).Where(f => f.Text.Length > 0))
        {
            text.Append(fact.Before).Append(fact.Text).Append(fact.Note);
        }

        text.Append(first.ClockSource.Length > 0 ? $", {ClockReads(sameClock)} a read." : ".");
        var lines = new List<string> { text.ToString() };
        // The classes the last scenario's placement check used: learned from every probe so far, the latest know the most.
        if (placed[^1].Environment.PlacementClasses is { Length: > 0 } classes)
        {
            lines.Add($"Placement classes by core-to-core probe: {classes}.");
        }

        var differences = placed.Skip(1)
            .Select(r => (Label: Label(r.Spec), Facts: Differences(facts, r.Environment)))
            .Where(d => d.Facts.Length > 0)
            .GroupBy(d => d.Facts, StringComparer.Ordinal);
        foreach (var group in differences)
        {
            lines.Add($"Placement of {string.Join(", ", group.Select(d => d.Label).Distinct())}: {group.Key}.");
        }

        return lines;
    }

    /// <summary>A scenario as one reads it in a list: "shm-ring 1 KB 1:1 full yield" (its topology too where N:M is more than 1:1).</summary>
    public static string Label(ScenarioSpec spec) =>
        $"{spec.Transport} {Bytes(spec.PayloadBytes)} {spec.Publishers}:{spec.Subscribers}" +
        (spec.Publishers > 1 || spec.Subscribers > 1 ? $" {Topology(spec.Topology)}" : string.Empty) +
        $" {AccessName(spec.PayloadAccess)} {WaitName(spec.WaitStrategy)}";

    /// <summary>One placement fact: its text, the separator before it on the Placement line, and what that line adds after it.</summary>
    private sealed record PlacementFact(string Text, string Before = "; ", string Note = "");

    /// <summary>The facts in line order; the clock's is its source alone ("clock tsc", empty when not recorded), its read cost being no fact.</summary>
    private static List<PlacementFact> PlacementFacts(EnvironmentInfo env)
    {
        var p = env.Placement;
        string sameCore = p.HasSamePhysicalCore ? (p.SamePhysicalCore ? "yes" : "no") : "–";
        string caches = p.SharedCaches.Count == 0 ? "none" : string.Join(", ", p.SharedCaches);
        return
        [
            new($"publishers on {p.PublisherCpus}"),
            new($"subscribers on {p.SubscriberCpus}", ", "),
            new($"probe pair {env.CoreToCoreCores}", Note: " (its round trip per scenario above)"),
            new($"same physical core {sameCore}"),
            new($"shared caches {caches}", ", "),
            new($"SMT {p.Smt} (siblings {p.SmtSiblings})"),
            new($"NUMA {p.NumaNodes}"),
            new($"cpufreq {p.CpufreqDriver}/{p.CpufreqGovernor}"),
            new($"isolated [{p.IsolatedCpus}]"),
            new($"nohz_full [{p.NohzFullCpus}]", ", "),
            new($"cgroup quota {p.CgroupCpuQuota}"),
            new($"THP {p.TransparentHugePages}"),
            new(env.ClockSource.Length > 0 ? $"clock {env.ClockSource}" : string.Empty),
        ];
    }

    /// <summary>The facts of <paramref name="env"/> that differ from <paramref name="first"/>'s, "; "-joined; empty when none do.</summary>
    private static string Differences(List<PlacementFact> first, EnvironmentInfo env)
    {
        var facts = PlacementFacts(env);
        var differ = facts.Select((f, i) => (Fact: f, Index: i)).Where(f => f.Fact.Text != first[f.Index].Text).Select(f => f.Index == facts.Count - 1
            ? (env.ClockSource.Length > 0 ? $"{f.Fact.Text}, {ClockReads([env])} a read" : "clock not recorded")
            : f.Fact.Text);
        return string.Join("; ", differ);
    }

    /// <summary>The clock read's cost over <paramref name="envs"/>: "49 ns", or "39–49 ns" where it moved; "–" when none recorded it.</summary>
    private static string ClockReads(IReadOnlyList<EnvironmentInfo> envs)
    {
        var reads = envs.Where(e => e.ClockRead is not null).Select(e => Math.Round((double)ScenarioProtos.ToNanoseconds(e.ClockRead))).ToList();
        if (reads.Count == 0)
        {
            return "–";
        }

        double min = reads.Min(), max = reads.Max();
        return min == max
            ? string.Create(CultureInfo.InvariantCulture, $"{min:0} ns")
            : string.Create(CultureInfo.InvariantCulture, $"{min:0}–{max:0} ns");
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

    public static string AccessName(PayloadAccess access) => access == PayloadAccess.HeaderOnly ? "header-only" : "full";
}
