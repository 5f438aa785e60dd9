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
    IReadOnlyList<ProcessUsage> Processes);

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
    string CoreToCoreCores);
