using System.Globalization;
using IpcBench.Daemon.Core;
using IpcBench.Reports;
using IpcBench.Daemon.Schema;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// CompareScenarios: candidate against baseline, metric by metric. Rates are better higher; latencies and CPU per
/// delivered message better lower; a change within the threshold is SAME. Lost, corrupted and duplicated messages
/// have no tolerance: any more than the baseline had is a regression.
/// </summary>
public static class ScenarioComparer
{
    public const double DefaultThresholdPercent = 5;
    public const double MaxThresholdPercent = 1000;

    /// <summary>
    /// Beyond this the core-to-core probes of the two runs are called different: the probe itself varies by a few
    /// nanoseconds between runs on one machine, but threads landing on SMT siblings vs another socket differ manyfold.
    /// </summary>
    private const double ProbeDifferencePercent = 25;

    public static double ResolveThreshold(double thresholdPercent)
    {
        if (double.IsNaN(thresholdPercent) || thresholdPercent < 0 || thresholdPercent > MaxThresholdPercent)
        {
            throw new RequestRefusedException(RefusalKind.InvalidArgument, "threshold_percent",
                $"must be more than 0 and at most {MaxThresholdPercent:0} (0 means {DefaultThresholdPercent:0}); got {thresholdPercent.ToString(CultureInfo.InvariantCulture)}");
        }

        return thresholdPercent == 0 ? DefaultThresholdPercent : thresholdPercent;
    }

    /// <summary>FAILED_PRECONDITION unless the scenario finished with a result: COMPLETED or STOPPED, with stats.</summary>
    public static void RequireComparable(string field, Scenario scenario)
    {
        if (scenario.State is not (ScenarioState.Completed or ScenarioState.Stopped))
        {
            var why = scenario.State == ScenarioState.Failed ? $" ({scenario.Error})" : string.Empty;
            throw new RequestRefusedException(RefusalKind.FailedPrecondition, field,
                $"scenario '{scenario.Id}' is {StateName(scenario.State)}{why}; only SCENARIO_STATE_COMPLETED or SCENARIO_STATE_STOPPED scenarios can be compared");
        }

        if (scenario.Stats is null)
        {
            throw new RequestRefusedException(RefusalKind.FailedPrecondition, field, $"scenario '{scenario.Id}' has no stats to compare");
        }
    }

    public static CompareScenariosResponse Compare(Scenario baseline, Scenario candidate, double thresholdPercent)
    {
        var response = new CompareScenariosResponse { Baseline = baseline, Candidate = candidate, ThresholdPercent = thresholdPercent };
        var b = baseline.Stats ?? new ScenarioStats();
        var c = candidate.Stats ?? new ScenarioStats();

        response.Metrics.Add(Continuous("messages_per_second", "msg/s", b.MessagesPerSecond, c.MessagesPerSecond, higherIsBetter: true, thresholdPercent));
        response.Metrics.Add(Continuous("bytes_per_second", "B/s", b.BytesPerSecond, c.BytesPerSecond, higherIsBetter: true, thresholdPercent));

        foreach (var (name, read) in LatencyMetrics)
        {
            response.Metrics.Add(LatencyMetric(name, b.Latency, c.Latency, read, thresholdPercent));
        }

        foreach (var role in (string[])["daemon", "agent"])
        {
            if (CpuPerMessage(role, b, c, thresholdPercent) is { } cpu)
            {
                response.Metrics.Add(cpu);
            }
        }

        response.Metrics.Add(Count("messages_lost", b.MessagesLost, c.MessagesLost));
        response.Metrics.Add(Count("messages_corrupted", b.MessagesCorrupted, c.MessagesCorrupted));
        response.Metrics.Add(Count("messages_duplicated", b.MessagesDuplicated, c.MessagesDuplicated));

        response.Verdict = response.Metrics.Any(m => m.Verdict == ComparisonVerdict.Regressed) ? ComparisonVerdict.Regressed
            : response.Metrics.Any(m => m.Verdict == ComparisonVerdict.Improved) ? ComparisonVerdict.Improved
            : ComparisonVerdict.Same;
        response.Notes.AddRange(Differences(baseline, candidate));
        var invalid = Invalid("baseline", baseline).Concat(Invalid("candidate", candidate)).ToList();
        if (invalid.Count > 0)
        {
            // The metrics keep their own verdicts for the reader; the answer is not drawn from an invalid measurement.
            response.Verdict = ComparisonVerdict.Inconclusive;
            response.Notes.AddRange(invalid);
        }

        return response;
    }

    private static IEnumerable<string> Invalid(string side, Scenario scenario) =>
        scenario.Stats is { } stats ? ScenarioProtos.FromProto(stats).Validity.Select(v => $"{side} {scenario.Id} is not a valid measurement: {v.Text}") : [];

    private static readonly (string Name, Func<LatencyStats, Google.Protobuf.WellKnownTypes.Duration?> Read)[] LatencyMetrics =
    [
        ("latency_p50", l => l.P50), ("latency_p90", l => l.P90), ("latency_p99", l => l.P99), ("latency_p999", l => l.P999), ("latency_max", l => l.Max),
    ];

    /// <summary>A ratio-and-threshold metric, by the rule CompareSuites shares (<see cref="MetricChange.Continuous"/>).</summary>
    public static MetricComparison Continuous(string metric, string unit, double baseline, double candidate, bool higherIsBetter, double thresholdPercent) =>
        ToProto(MetricChange.Continuous(metric, unit, baseline, candidate, higherIsBetter, thresholdPercent));

    public static MetricComparison ToProto(MetricChange change)
    {
        var proto = new MetricComparison
        {
            Metric = change.Metric,
            Unit = change.Unit,
            Baseline = change.Baseline,
            Candidate = change.Candidate,
            Ratio = change.Ratio,
            ChangePercent = change.ChangePercent,
            HigherIsBetter = change.HigherIsBetter,
            Verdict = (ComparisonVerdict)change.Verdict,
            Note = change.Note,
            BaselineSamples = change.BaselineSamples,
            CandidateSamples = change.CandidateSamples,
            Placement = change.Placement,
        };
        if (change.PValue is { } p)
        {
            proto.PValue = p;
            proto.ShiftPercent = change.ShiftPercent ?? 0;
            proto.ShiftCiLowPercent = change.ShiftCiLowPercent ?? 0;
            proto.ShiftCiHighPercent = change.ShiftCiHighPercent ?? 0;
        }

        return proto;
    }

    /// <summary>Lost, corrupted, duplicated: counts where only zero is right, so any increase regresses whatever the threshold.</summary>
    public static MetricComparison Count(string metric, ulong baseline, ulong candidate)
    {
        var comparison = Continuous(metric, "count", baseline, candidate, higherIsBetter: false, thresholdPercent: 0);
        comparison.Verdict = candidate > baseline ? ComparisonVerdict.Regressed : candidate < baseline ? ComparisonVerdict.Improved : ComparisonVerdict.Same;
        comparison.Note = candidate > baseline ? "any increase is a regression, whatever the threshold" : string.Empty;
        return comparison;
    }

    private static MetricComparison LatencyMetric(string name, LatencyStats? baseline, LatencyStats? candidate,
        Func<LatencyStats, Google.Protobuf.WellKnownTypes.Duration?> read, double thresholdPercent)
    {
        string? missing = baseline is not { Samples: > 0 } ? "the baseline has no latency samples"
            : candidate is not { Samples: > 0 } ? "the candidate has no latency samples"
            : baseline.Kind != candidate.Kind ? $"latency kinds differ ({EnumName(baseline.Kind)} vs {EnumName(candidate.Kind)})"
            : null;
        if (missing is not null)
        {
            return NotCompared(name, "ns", higherIsBetter: false, missing,
                baseline is { Samples: > 0 } ? Ns(read(baseline)) : 0,
                candidate is { Samples: > 0 } ? Ns(read(candidate)) : 0);
        }

        return Continuous(name, "ns", Ns(read(baseline!)), Ns(read(candidate!)),
            higherIsBetter: false, thresholdPercent);
    }

    /// <summary>
    /// CPU time of one process role (the daemon's publishers, or all agents together) over the measured window, per
    /// message delivered in that window: what a transport costs, independent of how fast it ran.
    /// </summary>
    private static MetricComparison? CpuPerMessage(string role, ScenarioStats baseline, ScenarioStats candidate, double thresholdPercent)
    {
        var metric = $"cpu_per_message_{role}";
        bool inBaseline = baseline.Processes.Any(p => p.Role == role);
        bool inCandidate = candidate.Processes.Any(p => p.Role == role);
        if (!inBaseline && !inCandidate)
        {
            return null;
        }

        double? b = PerMessage(baseline, role);
        double? c = PerMessage(candidate, role);
        if (b is null || c is null)
        {
            var why = !inBaseline || !inCandidate
                ? $"only the {(inBaseline ? "baseline" : "candidate")} has {role} processes"
                : $"the {(b is null ? "baseline" : "candidate")} delivered no messages in its measured window";
            return NotCompared(metric, "ns", higherIsBetter: false, why, b ?? 0, c ?? 0);
        }

        return Continuous(metric, "ns", b.Value, c.Value, higherIsBetter: false, thresholdPercent);
    }

    private static double? PerMessage(ScenarioStats stats, string role)
    {
        var processes = stats.Processes.Where(p => p.Role == role).ToList();
        return processes.Count == 0 || stats.MeasuredMessages == 0 ? null : processes.Sum(p => p.CpuSeconds) * 1e9 / stats.MeasuredMessages;
    }

    private static MetricComparison NotCompared(string metric, string unit, bool higherIsBetter, string note, double baseline, double candidate) => new()
    {
        Metric = metric,
        Unit = unit,
        Baseline = baseline,
        Candidate = candidate,
        HigherIsBetter = higherIsBetter,
        Verdict = ComparisonVerdict.Unspecified,
        Note = "not compared: " + note,
    };

    /// <summary>What differs between the two runs besides the build: spec and machine.</summary>
    public static IReadOnlyList<string> Differences(Scenario baseline, Scenario candidate)
    {
        var notes = new List<string>();
        var b = baseline.Spec ?? new ScenarioSpec();
        var c = candidate.Spec ?? new ScenarioSpec();
        Differ(notes, "transport", b.Transport, c.Transport);
        Differ(notes, "payload_bytes", b.PayloadBytes, c.PayloadBytes);
        Differ(notes, "publishers:subscribers (N:M)", $"{b.Publishers}:{b.Subscribers}", $"{c.Publishers}:{c.Subscribers}");
        Differ(notes, "topology", EnumName(b.Topology), EnumName(c.Topology));
        Differ(notes, "payload_access", EnumName(b.PayloadAccess), EnumName(c.PayloadAccess));
        Differ(notes, "mode", EnumName(b.Mode), EnumName(c.Mode));
        Differ(notes, "wait_strategy", EnumName(b.WaitStrategy), EnumName(c.WaitStrategy));
        Differ(notes, "rate_per_publisher", b.RatePerPublisher, c.RatePerPublisher);
        Differ(notes, "measured_duration",
            (baseline.Stats?.MeasuredDuration?.ToTimeSpan() ?? TimeSpan.Zero).TotalSeconds.ToString("0.0 s", CultureInfo.InvariantCulture),
            (candidate.Stats?.MeasuredDuration?.ToTimeSpan() ?? TimeSpan.Zero).TotalSeconds.ToString("0.0 s", CultureInfo.InvariantCulture));

        var be = baseline.Environment ?? new EnvironmentInfo();
        var ce = candidate.Environment ?? new EnvironmentInfo();
        Differ(notes, "environment.hostname", be.Hostname, ce.Hostname);
        Differ(notes, "environment.cpu_model", be.CpuModel, ce.CpuModel);
        Differ(notes, "environment.logical_cores", be.LogicalCores, ce.LogicalCores);
        Differ(notes, "environment.kernel", be.Kernel, ce.Kernel);
        Differ(notes, "environment.dotnet_version", be.DotnetVersion, ce.DotnetVersion);
        Differ(notes, "environment.os", be.Os, ce.Os);
        if (be.CoreToCoreRoundTrip is { } bp && ce.CoreToCoreRoundTrip is { } cp)
        {
            double bns = Ns(bp);
            double cns = Ns(cp);
            if (be.CoreToCoreCores != ce.CoreToCoreCores || (bns > 0 && Math.Abs(cns / bns - 1) * 100 > ProbeDifferencePercent))
            {
                notes.Add(string.Create(CultureInfo.InvariantCulture,
                    $"environment.core_to_core_round_trip: {bns:0} ns ({be.CoreToCoreCores}) vs {cns:0} ns ({ce.CoreToCoreCores}): the threads ran on cores that share a cache line differently"));
            }
        }
        else if ((be.CoreToCoreRoundTrip is null) != (ce.CoreToCoreRoundTrip is null))
        {
            notes.Add($"environment.core_to_core_round_trip: only the {(be.CoreToCoreRoundTrip is null ? "candidate" : "baseline")} has a core-to-core probe");
        }

        return notes;
    }

    private static void Differ<T>(List<string> notes, string what, T baseline, T candidate)
    {
        if (!EqualityComparer<T>.Default.Equals(baseline, candidate))
        {
            notes.Add(string.Create(CultureInfo.InvariantCulture, $"{what}: {baseline} vs {candidate}"));
        }
    }

    private static string StateName(ScenarioState state) => EnumName(state);

    private static string EnumName<T>(T value)
        where T : struct, System.Enum =>
        ControlReflection.Descriptor.EnumTypes.FirstOrDefault(e => e.ClrType == typeof(T))?.FindValueByNumber(Convert.ToInt32(value, CultureInfo.InvariantCulture))?.Name
        ?? Convert.ToInt32(value, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture);

    private static double Ns(Google.Protobuf.WellKnownTypes.Duration? duration) => duration is null ? 0 : ScenarioProtos.ToNanoseconds(duration);
}
