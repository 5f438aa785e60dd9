namespace IpcBench.Daemon.Model;

/// <summary>How a long or open-ended scenario holds up, judged while it runs (Scenarios/SoakJudge, rules in SoakRules).</summary>
public enum SoakStatus
{
    /// <summary>Too few points yet for any trend (the first minute, by default).</summary>
    Judging,

    /// <summary>No loss, no leak, no drift.</summary>
    Holding,

    /// <summary>Throughput or latency p99 moves, or a rate-limited scenario falls behind its offered rate.</summary>
    Drifting,

    /// <summary>A process's memory, threads, descriptors or shared memory grow.</summary>
    Leaking,

    /// <summary>Messages lost, duplicated or corrupted.</summary>
    Losing,
}

/// <summary>What a process holds, each of which a leak makes grow.</summary>
public enum ProcessResource
{
    ManagedHeapBytes,
    RssBytes,
    SharedMemoryBytes,
    Threads,
    Descriptors,

    /// <summary>What the GC holds from the OS, live or free: read beside the RSS to tell the GC's headroom from a leak.</summary>
    GcCommittedBytes,

    /// <summary>RSS less resident shared memory less GC-committed memory: native allocations, stacks, code.</summary>
    NativeBytes,
}

/// <summary>
/// A least-squares slope in units per hour with its 95 % interval, over <see cref="Points"/> points spanning <see cref="Span"/>;
/// <see cref="Mean"/> is the points' mean value.
/// </summary>
public sealed record TrendSlope(double PerHour, double LowPerHour, double HighPerHour, int Points, TimeSpan Span, double Mean)
{
    /// <summary>The fitted line's rise over the span.</summary>
    public double Change => PerHour * Span.TotalHours;

    /// <summary>Whether the interval lies wholly above zero (rising) or wholly below it (falling).</summary>
    public bool ExcludesZero => LowPerHour > 0 || HighPerHour < 0;
}

/// <summary>
/// A series judged since the measured window began and over the last window (constant memory both), and over the
/// latest third of the window's points (<see cref="Recent"/>): whether it still moves now.
/// </summary>
public sealed record TrendPair(TrendSlope? SinceStart, TrendSlope? LastWindow, TrendSlope? Recent = null);

/// <summary>One resource of one process: its latest reading and trend.</summary>
public sealed record ResourceTrend(ProcessResource Resource, double Latest, TrendPair Trend);

/// <summary>The daemon (index -1) or an agent (its subscriber index), and its resources.</summary>
public sealed record ProcessTrends(string Role, int Index, IReadOnlyList<ResourceTrend> Resources);

/// <summary>
/// The judgement of a scenario so far: the verdict and why, the throughput (delivered msg/s) and latency p99 (ns)
/// trends, the first and the last window's mean rate, the latest point's latency percentiles, and every process's
/// resources.
/// </summary>
public sealed record SoakSummary(
    SoakStatus Verdict,
    IReadOnlyList<string> Reasons,
    TimeSpan JudgedOver,
    TimeSpan Window,
    TrendPair Throughput,
    double? FirstWindowMessagesPerSecond,
    double? LastWindowMessagesPerSecond,
    TrendPair LatencyP99Ns,
    long? LastP50Ns,
    long? LastP99Ns,
    long? LastP999Ns,
    IReadOnlyList<ProcessTrends> Processes);
