using IpcBench.Transports;

namespace IpcBench.Daemon.Model;

/// <summary>
/// The spec as a scenario ran it, as its record keeps it: what Get, List, exports and comparisons show. Unlike the
/// engine's ResolvedSpec it names its transport by id, so a scenario stored by a build with other transports still
/// reads back; fields a stored spec may lack are nullable (absent stays absent when shown again).
/// </summary>
public sealed record RunSpec(
    string Transport,
    int Publishers,
    int Subscribers,
    int PayloadBytes,
    TimeSpan? Duration,
    TimeSpan? Warmup,
    double RatePerPublisher,
    RunTopology Topology,
    RunPayloadAccess PayloadAccess,
    RunMode Mode,
    WaitMode? WaitMode,
    string Name,
    int? LatencySampleEvery)
{
    /// <summary>Placement (CPU lists in canonical form, SCHED_FIFO priority, mlockall, noise bound); all null in results stored before it existed.</summary>
    public string? PublisherCpus { get; init; }

    public string? SubscriberCpus { get; init; }

    public int? RealtimePriority { get; init; }

    public bool? LockMemory { get; init; }

    public double? MaxNoisePercent { get; init; }
}
