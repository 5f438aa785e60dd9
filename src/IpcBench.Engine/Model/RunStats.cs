using IpcBench.Workload;
namespace IpcBench.Daemon.Model;

/// <summary>
/// A scenario's result: totals over the whole run (warmup included), rates over the measured window, latency and the
/// processes' CPU and memory. <see cref="MeasuredDuration"/> and <see cref="Latency"/> are null in results stored
/// before measuring began.
/// </summary>
public sealed record RunStats(
    long MessagesSent,
    long MessagesReceived,
    long MessagesLost,
    long MessagesCorrupted,
    long MessagesDuplicated,
    long MessagesExpected,
    double MessagesPerSecond,
    double BytesPerSecond,
    long MeasuredMessages,
    TimeSpan? MeasuredDuration,
    LatencySummary? Latency,
    IReadOnlyList<ProcessUsage> Processes)
{
    /// <summary>The share of latency p99 above which sender lag "dominates" a result (docs/how-it-measures.md).</summary>
    public const double SenderLagDominatesShare = 0.5;

    /// <summary>Others' CPU as a share of the machine over the measured window, in percent; null before it was measured.</summary>
    public double? NoisePercent { get; init; }

    /// <summary>The same over the warmup.</summary>
    public double? WarmupNoisePercent { get; init; }

    /// <summary>The part of <see cref="NoisePercent"/> that was hypervisor steal (not a process of this machine); null before it was recorded.</summary>
    public double? StealPercent { get; init; }

    /// <summary>The 1-minute load average at the end of the measured window.</summary>
    public double? LoadAverage1m { get; init; }

    /// <summary>Rate-limited runs only: how late measured messages left their publishers, merged; null in closed loop.</summary>
    public SenderLagSummary? SenderLag { get; init; }

    /// <summary>Why the figures are not a valid measurement (<see cref="ValidityRules"/>); empty when they are.</summary>
    public IReadOnlyList<ValidityNote> Validity { get; init; } = [];

    /// <summary>The warmup as run: the spec's, then on until code generation settled (or its limit); null before measuring.</summary>
    public TimeSpan? WarmupRun { get; init; }

    /// <summary>Whether code generation had settled when the window began; null before measuring, or when not checked.</summary>
    public bool? CodeSettled { get; init; }

    /// <summary>The soak judgement (open-ended scenarios, and timed ones long enough to judge); null otherwise.</summary>
    public SoakSummary? Soak { get; init; }
}

/// <summary>
/// Sender lag in nanoseconds: how long after its intended send time each measured message left. <see cref="Dominates"/>:
/// its p99 is above <see cref="RunStats.SenderLagDominatesShare"/> of the latency p99, so the tail is mostly the harness's.
/// </summary>
public sealed record SenderLagSummary(long Samples, long? P50Ns, long? P99Ns, long? MaxNs, bool Dominates)
{
    /// <summary>Whether a sender-lag p99 of <paramref name="senderLagP99Ns"/> is above the stated share of <paramref name="latency"/>'s p99.</summary>
    public static bool DominatesLatency(long senderLagP99Ns, LatencySummary? latency) =>
        latency?.P99Ns is { } p99 && p99 > 0 && senderLagP99Ns > RunStats.SenderLagDominatesShare * p99;
}

/// <summary>
/// Latency figures in nanoseconds (TimeSpan's 100 ns ticks would round away what sub-microsecond transports show). The
/// engine always fills every figure; a figure a stored result lacks stays null, so it is shown as absent again.
/// </summary>
public sealed record LatencySummary(
    RunLatencyKind Kind,
    long Samples,
    long? MinNs,
    long? P50Ns,
    long? P90Ns,
    long? P99Ns,
    long? P999Ns,
    long? MaxNs,
    long? MeanNs)
{
    /// <summary>The 99.99th percentile (the reports' HDR chart ends there); null in results stored before it was measured.</summary>
    public long? P9999Ns { get; init; }
}

/// <summary>One tick (about a second) of a running scenario; CPU in percent of one core.</summary>
public sealed record IntervalSample(
    TimeSpan Elapsed,
    double MessagesPerSecond,
    double BytesPerSecond,
    LatencySummary? Latency,
    double DaemonCpuPercent,
    double AgentsCpuPercent);

/// <summary>One process's CPU and memory over the measured window: the daemon (index -1) or an agent (its subscriber index).</summary>
public sealed record ProcessUsage(string Role, int Index, int Pid, double CpuSeconds, double CpuPercent, long PeakRssBytes)
{
    public const string DaemonRole = "daemon";
    public const string AgentRole = "agent";

    /// <summary>Methods the JIT compiled in this process during the measured window and the time it took; null in results stored before it was recorded.</summary>
    public JitActivity? Jit { get; init; }

    /// <summary>
    /// For an agent, how many scenarios its process served before this one: 0 started for it, more a warm agent
    /// (<see cref="Agents.AgentPool"/>); null for the daemon and in results stored before agents were reused.
    /// </summary>
    public int? ScenariosBefore { get; init; }
}

/// <summary>The machine a scenario ran on; the core-to-core figure is null when the probe could not run.</summary>
public sealed record RunEnvironment(
    int LogicalCores,
    string CpuModel,
    string Kernel,
    string DotnetVersion,
    string Os,
    string Hostname,
    long? CoreToCoreRoundTripNs,
    string CoreToCoreCores)
{
    /// <summary>Where the hot loops ran and the machine settings around them; null in results stored before it existed.</summary>
    public PlacementFacts? Placement { get; init; }

    /// <summary>The kernel's clocksource, e.g. "tsc"; empty in results stored before it was recorded.</summary>
    public string ClockSource { get; init; } = string.Empty;

    /// <summary>What one read of the clock the latencies use costs, in ns; null in results stored before it was recorded.</summary>
    public long? ClockReadNs { get; init; }

    /// <summary>The core-to-core probe again after the measured window; null when it could not run or before it was recorded.</summary>
    public long? CoreToCoreAfterNs { get; init; }

    /// <summary>The placement classes learned from the machine's probe history as the run ended (<see cref="PlacementClasses.Describe"/>); empty before it was recorded.</summary>
    public string PlacementClasses { get; init; } = string.Empty;
}
