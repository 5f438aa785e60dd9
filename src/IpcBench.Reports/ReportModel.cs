namespace IpcBench.Reports;

/// <summary>How publishers reach subscribers in a cell (the engine's own names; the proto's live at the edge).</summary>
public enum CellTopology
{
    AllToAll,
    Paired,
}

public enum CellAccess
{
    Full,
    HeaderOnly,
}

public enum CellMode
{
    Stream,
    RoundTrip,
}

/// <summary>Default: the transport's own default wait strategy.</summary>
public enum CellWait
{
    Default,
    Spin,
    Yield,
    Block,
}

/// <summary>
/// One cell of a suite's matrix: everything that makes two scenarios comparable, nothing about how long they ran. The
/// offered rate per publisher (0 = closed loop) is part of it: a rate sweep's cells differ only there.
/// </summary>
public sealed record CellKey(
    string Transport,
    int PayloadBytes,
    int Publishers = 1,
    int Subscribers = 1,
    CellTopology Topology = CellTopology.AllToAll,
    CellAccess Access = CellAccess.Full,
    CellMode Mode = CellMode.Stream,
    CellWait Wait = CellWait.Default,
    double RatePerPublisher = 0)
{
    /// <summary>"@ 10.0 K/s" per publisher for a rate-limited cell; null closed loop (what every label said before rates were keyed).</summary>
    private string? RateText => RatePerPublisher > 0 ? $"@ {ReportFormatting.Count(RatePerPublisher)}/s" : null;

    /// <summary>"block", "yield" or "spin"; null when the key leaves the wait to the transport's default without naming it.</summary>
    private string? WaitText => Wait == CellWait.Default ? null : Wait.ToString().ToLowerInvariant();

    /// <summary>The payload as every label writes it, e.g. "64 KB": also the charts' payload ticks.</summary>
    public string PayloadText => ReportFormatting.Bytes(PayloadBytes);

    /// <summary>A short label for tables and chart legends, e.g. "uds 1 KB 1:1 full".</summary>
    public string Label => string.Join(' ', new[]
    {
        Transport, PayloadText, $"{Publishers}:{Subscribers}" + (Topology == CellTopology.Paired ? " paired" : string.Empty),
        Access == CellAccess.Full ? "full" : "header-only",
        Mode == CellMode.RoundTrip ? "round-trip" : null,
        WaitText,
        RateText,
    }.Where(p => p is not null));

    /// <summary>The cell's shape without transport and payload, e.g. "1:1, full, stream, block": the tables group by it.</summary>
    public string Shape => ShapeText(withWait: true);

    /// <summary>
    /// The shape with the wait strategy left out: what a chart holds. Each transport resolves its own default wait (uds
    /// block, shm-ring yield), so grouped by <see cref="Shape"/> a quick matrix would need a chart per wait to compare them.
    /// </summary>
    public string ChartShape => ShapeText(withWait: false);

    /// <summary>A series on a chart of <see cref="ChartShape"/>: the transport with its wait named, e.g. "uds (block)".</summary>
    public string SeriesName => WaitText is { } wait ? $"{Transport} ({wait})" : Transport;

    private string ShapeText(bool withWait) => $"{Publishers}:{Subscribers}{(Topology == CellTopology.Paired ? " paired" : string.Empty)}, " +
        $"{(Access == CellAccess.Full ? "full" : "header-only")}, {(Mode == CellMode.RoundTrip ? "round trip" : "stream")}" +
        (withWait && WaitText is { } wait ? $", {wait}" : string.Empty) +
        (RateText is { } rate ? $", {rate} per publisher" : string.Empty);
}

/// <summary>What a report is made from: the suite, where it ran, and every cell with every repetition.</summary>
public sealed record SuiteReport(
    string SuiteId,
    string Name,
    string State,
    DateTimeOffset CreatedAt,
    DateTimeOffset? EndedAt,
    int Repetitions,
    ReportEnvironment Environment,
    IReadOnlyList<ReportCell> Cells,
    string? PresetId = null,
    string? PresetTitle = null,
    string? PresetReproduces = null,
    AdaptiveRepetitions? Adaptive = null)
{
    /// <summary>How the suite repeated its cells, as the report headers say it.</summary>
    public string RepetitionsText => Adaptive is { } a
        ? $"adaptive repetitions in interleaved rounds ({a.MinRepetitions}–{a.MaxRepetitions} per cell, until the median msg/s is known within ±{ReportFormatting.Number(a.TargetPrecisionPercent)} %)"
        : $"{Repetitions} repetition(s) in interleaved rounds";
}

/// <summary>An adaptive suite's rule: each cell took rounds until its median's precision reached the target, or the maximum.</summary>
public sealed record AdaptiveRepetitions(double TargetPrecisionPercent, int MinRepetitions, int MaxRepetitions);

/// <summary>Why a cell of an adaptive suite took no more rounds (the engine's CellStop in the report's terms).</summary>
public enum StopReason
{
    /// <summary>Fixed repetitions, or the cell was still taking rounds.</summary>
    None,
    TargetReached,
    MaxRepetitions,
    SuiteStopped,
}

/// <summary>The machine and build the suite ran on, shown on top of every report.</summary>
public sealed record ReportEnvironment(
    string Hostname,
    string CpuModel,
    int LogicalCores,
    string Kernel,
    string Os,
    string DotnetVersion,
    string BuildVersion,
    double? CoreToCoreNanoseconds,
    string ClockSource = "",
    double? ClockReadNanoseconds = null)
{
    /// <summary>
    /// The machine without what moves run to run on it: the build, the core-to-core probe (placement classes take it
    /// into account repetition by repetition) and the clock read's cost (a few ns apart; the clocksource stays). Two
    /// reports of one machine compare equal here.
    /// </summary>
    /// <remarks>A method, not a property: a record prints and compares its properties, and this one is a record too.</remarks>
    public ReportEnvironment Machine() => this with { BuildVersion = string.Empty, CoreToCoreNanoseconds = null, ClockReadNanoseconds = null, PlacementClasses = string.Empty };

    /// <summary>
    /// The placement classes the daemon had learned from the machine's probe history by the suite's latest scenario,
    /// e.g. "near ≤ 170 ns, far ≥ 400 ns, learned from 57 probes"; empty in reports from before they were learned.
    /// </summary>
    public string PlacementClasses { get; init; } = string.Empty;

    /// <summary>The clock the latencies are read with, e.g. "tsc, 21 ns a read"; empty when not recorded.</summary>
    public string Clock => ClockSource.Length == 0 ? string.Empty
        : ClockReadNanoseconds is { } read ? $"{ClockSource}, {read:0} ns a read" : ClockSource;
}

/// <summary>
/// A cell and its repetitions in round order (each round's last attempt); for presets, the published figures it
/// reproduces; the attempts max_noise_percent failed, retried or not; in an adaptive suite, why it took no more rounds;
/// in a rate search, its probes and answer.
/// </summary>
public sealed record ReportCell(CellKey Key, TimeSpan Duration, TimeSpan Warmup, IReadOnlyList<RepetitionResult> Repetitions, IReadOnlyList<PublishedFigure> Published,
    IReadOnlyList<NoisyAttempt>? NoisyAttempts = null, StopReason Stop = StopReason.None, RateSearchReport? Search = null)
{
    public CellSummary Summary => RepetitionStats.Summarize(Repetitions);

    public NoiseMark Noise => NoiseMark.Of(NoisyAttempts ?? []);

    public ValidityMark Validity => ValidityMark.Of(Repetitions);
}

/// <summary>
/// Why a repetition's figures are not a valid measurement of what its spec asked for: <paramref name="Kind"/> as the
/// proto's ValidityKind in snake case ("rate_shortfall", "receivers_behind", "sender_lag_dominates",
/// "noise_above_limit"), <paramref name="Detail"/> the figures that show it.
/// </summary>
public sealed record ValidityIssue(string Kind, string Detail)
{
    public string Text => $"{Kind.Replace('_', ' ')}: {Detail}";
}

/// <summary>A cell's succeeded repetitions that carry validity issues, by round; comparisons call such a cell INCONCLUSIVE.</summary>
public sealed record ValidityMark(IReadOnlyList<int> InvalidRounds, IReadOnlyList<string> Kinds)
{
    public static ValidityMark Of(IReadOnlyList<RepetitionResult> repetitions)
    {
        var invalid = repetitions.Where(r => r.Succeeded && !r.Valid).ToList();
        return new ValidityMark([.. invalid.Select(r => r.Round)], [.. invalid.SelectMany(r => r.Validity!).Select(v => v.Kind).Distinct().Order()]);
    }

    public bool Invalid => InvalidRounds.Count > 0;

    /// <summary>What every renderer shows, e.g. "invalid: rounds 2, 4 (rate shortfall)"; empty when every repetition is valid.</summary>
    public string Text => !Invalid ? string.Empty
        : $"invalid: round{(InvalidRounds.Count > 1 ? "s" : string.Empty)} {string.Join(", ", InvalidRounds)} ({string.Join(", ", Kinds.Select(k => k.Replace('_', ' ')))})";
}

/// <summary>An attempt at a round that failed on max_noise_percent; <paramref name="Retried"/>: another attempt followed.</summary>
public sealed record NoisyAttempt(int Round, string ScenarioId, double NoisePercent, bool Retried);

/// <summary>How noise touched a cell: retries taken (with the noise each retried attempt saw) and whether a round stayed noisy.</summary>
public sealed record NoiseMark(int Retries, IReadOnlyList<double> RetriedNoisePercent, bool FailedNoisy)
{
    public static NoiseMark Of(IReadOnlyList<NoisyAttempt> attempts)
    {
        var retried = attempts.Where(a => a.Retried).Select(a => a.NoisePercent).ToList();
        return new NoiseMark(retried.Count, retried, attempts.Any(a => !a.Retried));
    }

    public bool Noisy => Retries > 0 || FailedNoisy;

    /// <summary>What every renderer shows, e.g. "noisy: retried 2x (noise 31 %, 28 %); failed-noisy"; empty when the cell was quiet.</summary>
    public string Text
    {
        get
        {
            var parts = new List<string>(2);
            if (Retries > 0)
            {
                parts.Add($"noisy: retried {Retries}x (noise {string.Join(", ", RetriedNoisePercent.Select(n => ReportFormatting.Number(Math.Round(n, 1)) + " %"))})");
            }

            if (FailedNoisy)
            {
                parts.Add("failed-noisy");
            }

            return string.Join("; ", parts);
        }
    }
}

/// <summary>
/// One scenario of a cell. A failed one keeps its error and adds nothing to the cell's statistics. The core-to-core
/// probe taken before it says where its vCPUs sat (<see cref="PlacementStrata"/>). Rate-limited, the publishers' lag
/// behind their intended send times at p99 (null closed loop, and in reports written before it was kept). The noise:
/// others' CPU in percent of the machine while it measured (null in reports written before it was kept), what bounds
/// how far a `noise above limit` flag can have moved its figures (<see cref="FlagBounds"/>).
/// </summary>
public sealed record RepetitionResult(
    int Round,
    string ScenarioId,
    string? Error,
    double MessagesPerSecond,
    double BytesPerSecond,
    double DaemonCpuPercent,
    double AgentsCpuPercent,
    LatencyPercentiles Latency,
    IReadOnlyList<SeriesPoint> Series,
    double? ProbeNanoseconds = null,
    IReadOnlyList<ValidityIssue>? Validity = null,
    double? SenderLagP99Nanoseconds = null,
    double? NoisePercent = null)
{
    public bool Succeeded => Error is null;

    /// <summary>No validity issue (a report.json from before they were checked has none either).</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public bool Valid => Validity is not { Count: > 0 };
}

/// <summary>Latency in nanoseconds: one-way, or round trip in MODE_ROUND_TRIP.</summary>
public sealed record LatencyPercentiles(long Samples, double P50, double P90, double P99, double P999, double P9999, double Max)
{
    public static readonly LatencyPercentiles None = new(0, 0, 0, 0, 0, 0, 0);

    /// <summary>The percentiles the HDR-style chart draws, as (percentile, ns).</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public IReadOnlyList<(double Percentile, double Nanoseconds)> Points =>
        [(50, P50), (90, P90), (99, P99), (99.9, P999), (99.99, P9999)];
}

/// <summary>One tick (about a second) of a scenario, from the start of its warmup.</summary>
public sealed record SeriesPoint(double ElapsedSeconds, double MessagesPerSecond, double DaemonCpuPercent, double AgentsCpuPercent);
