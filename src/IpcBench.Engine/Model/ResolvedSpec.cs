using IpcBench.Transports;
using IpcBench.Workload;

namespace IpcBench.Daemon.Model;

/// <summary>A validated scenario spec with every default resolved: what the engine runs.</summary>
public sealed record ResolvedSpec(
    ITransport Transport,
    int Publishers,
    int Subscribers,
    int PayloadBytes,
    TimeSpan? Duration,
    TimeSpan Warmup,
    double RatePerPublisher,
    RunTopology Topology,
    RunPayloadAccess PayloadAccess,
    RunMode Mode,
    WaitMode WaitMode,
    string Name,
    int LatencySampleEvery)
{
    /// <summary>CPUs, priority and memory locking of the hot loops; <see cref="ScenarioPlacement.None"/> when the spec sets none.</summary>
    public ScenarioPlacement Placement { get; init; } = ScenarioPlacement.None;

    public bool FullPayload => PayloadAccess == RunPayloadAccess.Full;

    public bool RoundTrip => Mode == RunMode.RoundTrip;

    public bool Paired => Topology == RunTopology.Paired;

    public int MaxMessageBytes => MessageHeader.MessageBytes(PayloadBytes);

    /// <summary>Publisher indexes subscriber <paramref name="subscriber"/> receives from.</summary>
    public IEnumerable<int> PublishersOf(int subscriber) => Paired ? [subscriber] : Enumerable.Range(0, Publishers);

    public int SubscribersPerPublisher => Paired ? 1 : Subscribers;

    /// <summary>Deliveries when every publisher sends one message: the factor between a per-publisher rate and delivered msg/s.</summary>
    public int FanOut => Publishers * SubscribersPerPublisher;

    /// <summary>What a rate-limited scenario offers, in deliveries per second (as messages_per_second counts them); 0 in closed loop.</summary>
    public double OfferedMessagesPerSecond => RatePerPublisher * FanOut;

    /// <summary>What the transport is told about publisher <paramref name="index"/> of this scenario.</summary>
    public PublisherOptions PublisherOptions(TransportEnvironment environment, string scenarioKey, int index) =>
        new(environment, scenarioKey, index, SubscribersPerPublisher, Publishers, Subscribers, MaxMessageBytes, WaitMode, RoundTrip);

    /// <summary>Shared memory the scenario's publishers will map, by the transport's own estimate.</summary>
    public long SharedMemoryBytes(TransportEnvironment environment, string scenarioKey) =>
        Enumerable.Range(0, Publishers).Sum(p => Transport.SharedMemoryBytes(PublisherOptions(environment, scenarioKey, p)));

    /// <summary>Agent processes the scenario starts: one per subscriber, none for in-process transports.</summary>
    public int AgentProcesses => Transport.Capabilities.CrossProcess ? Subscribers : 0;

    /// <summary>The spec as the scenario's record keeps it and users see it echoed: defaults filled in.</summary>
    public RunSpec ToRunSpec() => new(
        Transport.Id, Publishers, Subscribers, PayloadBytes, Duration, Warmup, RatePerPublisher, Topology, PayloadAccess, Mode, WaitMode, Name,
        LatencySampleEvery)
    {
        PublisherCpus = Placement.PublisherCpus.ToString(),
        SubscriberCpus = Placement.SubscriberCpus.ToString(),
        RealtimePriority = Placement.RealtimePriority,
        LockMemory = Placement.LockMemory,
        MaxNoisePercent = Placement.MaxNoisePercent,
    };
}
