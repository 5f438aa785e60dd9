using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>A validated scenario spec with every default resolved: what the engine runs.</summary>
public sealed record ResolvedSpec(
    ITransport Transport,
    int Publishers,
    int Subscribers,
    int PayloadBytes,
    TimeSpan? Duration,
    TimeSpan Warmup,
    double RatePerPublisher,
    Topology Topology,
    PayloadAccess PayloadAccess,
    Mode Mode,
    WaitMode WaitMode,
    string Name,
    int LatencySampleEvery)
{
    /// <summary>CPUs, priority and memory locking of the hot loops; <see cref="ScenarioPlacement.None"/> when the spec sets none.</summary>
    public ScenarioPlacement Placement { get; init; } = ScenarioPlacement.None;

    public bool FullPayload => PayloadAccess == PayloadAccess.Full;

    public bool RoundTrip => Mode == Mode.RoundTrip;

    public bool Paired => Topology == Topology.Paired;

    public int MaxMessageBytes => MessageHeader.MessageBytes(PayloadBytes);

    /// <summary>Publisher indexes subscriber <paramref name="subscriber"/> receives from.</summary>
    public IEnumerable<int> PublishersOf(int subscriber) => Paired ? [subscriber] : Enumerable.Range(0, Publishers);

    public int SubscribersPerPublisher => Paired ? 1 : Subscribers;

    /// <summary>What the transport is told about publisher <paramref name="index"/> of this scenario.</summary>
    public PublisherOptions PublisherOptions(TransportEnvironment environment, string scenarioKey, int index) =>
        new(environment, scenarioKey, index, SubscribersPerPublisher, Publishers, Subscribers, MaxMessageBytes, WaitMode, RoundTrip);

    /// <summary>Shared memory the scenario's publishers will map, by the transport's own estimate.</summary>
    public long SharedMemoryBytes(TransportEnvironment environment, string scenarioKey) =>
        Enumerable.Range(0, Publishers).Sum(p => Transport.SharedMemoryBytes(PublisherOptions(environment, scenarioKey, p)));

    /// <summary>Agent processes the scenario starts: one per subscriber, none for in-process transports.</summary>
    public int AgentProcesses => Transport.Capabilities.CrossProcess ? Subscribers : 0;

    /// <summary>The spec echoed back to users, defaults filled in.</summary>
    public ScenarioSpec ToProto()
    {
        var spec = new ScenarioSpec
        {
            Transport = Transport.Id,
            Publishers = Publishers,
            Subscribers = Subscribers,
            PayloadBytes = PayloadBytes,
            Warmup = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(Warmup),
            RatePerPublisher = RatePerPublisher,
            Topology = Topology,
            PayloadAccess = PayloadAccess,
            Mode = Mode,
            WaitStrategy = WaitStrategies.ToProto(WaitMode),
            Name = Name,
            LatencySampleEvery = LatencySampleEvery,
            PublisherCpus = Placement.PublisherCpus.ToString(),
            SubscriberCpus = Placement.SubscriberCpus.ToString(),
            RealtimePriority = Placement.RealtimePriority,
            LockMemory = Placement.LockMemory,
        };
        if (Placement.MaxNoisePercent is { } maxNoise)
        {
            spec.MaxNoisePercent = maxNoise;
        }

        if (Duration is { } duration)
        {
            spec.Duration = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(duration);
        }

        return spec;
    }
}
