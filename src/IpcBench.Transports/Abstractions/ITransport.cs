namespace IpcBench.Transports;

/// <summary>
/// One IPC mechanism. A transport makes publisher endpoints (which subscribers connect to by address) and subscriber
/// endpoints; everything else (headers, verification, timing, orchestration) is shared and lives outside the transport.
/// </summary>
public interface ITransport
{
    string Id { get; }

    string Description { get; }

    TransportCapabilities Capabilities { get; }

    /// <summary>Null when the transport can run on this machine; otherwise why not.</summary>
    string? UnavailableReason { get; }

    /// <summary>Creates a listening publisher. Subscribers connect to its <see cref="IPublisherEndpoint.Address"/>.</summary>
    IPublisherEndpoint CreatePublisher(PublisherOptions options);

    /// <summary>Connects to the given publishers. Returns once every connection is established.</summary>
    ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken);

    /// <summary>
    /// Bytes of shared memory (e.g. in /dev/shm) one publisher with these options maps, so the daemon can refuse a
    /// scenario before it runs out of shared memory mid-run. Zero for transports that use none.
    /// </summary>
    long SharedMemoryBytes(PublisherOptions options) => 0;

    /// <summary>Removes files, sockets or shared memory left behind by daemons that no longer run.</summary>
    void RemoveStaleResources(TransportEnvironment environment)
    {
    }
}

public enum WaitMode
{
    Spin,
    Yield,
    Block,
}

/// <param name="HotLoopAllocations">
/// Null when the publisher's and the receiver's loops allocate nothing per message (a test holds every transport to
/// what it declares here); otherwise what allocates, for transports whose library carries each message as objects.
/// </param>
public sealed record TransportCapabilities(
    bool CrossProcess,
    bool ZeroCopy,
    bool SupportsRoundTrip,
    IReadOnlyList<WaitMode> WaitModes,
    WaitMode DefaultWaitMode,
    int MaxPayloadBytes,
    string? HotLoopAllocations = null)
{
    /// <summary>The payload every transport here carries at most (64 MiB); the daemon's own limit may be lower.</summary>
    public const int LargestPayloadBytes = 64 * 1024 * 1024;
}

/// <summary>Where a transport may put its files, and whose they are.</summary>
/// <param name="RuntimeDirectory">A private directory of the running daemon, removed when it stops.</param>
/// <param name="OwnerPid">The daemon's pid; names embed it so stale resources of dead daemons can be found.</param>
public sealed record TransportEnvironment(string RuntimeDirectory, int OwnerPid);

/// <param name="ScenarioKey">Short unique token of the scenario, safe for file and pipe names.</param>
/// <param name="MaxMessageBytes">Largest message (header included) that will be sent.</param>
/// <param name="ExpectedSubscribers">How many subscribers will connect to this publisher.</param>
/// <param name="TotalPublishers">Publishers in the whole scenario (to size shared services).</param>
/// <param name="TotalSubscribers">Subscribers in the whole scenario.</param>
public sealed record PublisherOptions(
    TransportEnvironment Environment,
    string ScenarioKey,
    int PublisherIndex,
    int ExpectedSubscribers,
    int TotalPublishers,
    int TotalSubscribers,
    int MaxMessageBytes,
    WaitMode WaitMode,
    bool RoundTrip);

public sealed record PublisherAddress(int PublisherIndex, string Address);

public sealed record SubscriberOptions(
    TransportEnvironment Environment,
    string ScenarioKey,
    int SubscriberIndex,
    IReadOnlyList<PublisherAddress> Publishers,
    int TotalPublishers,
    int TotalSubscribers,
    int MaxMessageBytes,
    WaitMode WaitMode,
    bool RoundTrip);

/// <summary>
/// The sending side of one publisher, fanned out to every subscriber connected to it. Used by one thread.
/// </summary>
public interface IPublisherEndpoint : IDisposable
{
    /// <summary>What subscribers pass to <see cref="ITransport.CreateSubscriber"/> to reach this publisher.</summary>
    string Address { get; }

    /// <summary>Blocks until <paramref name="count"/> subscribers are connected and will receive every message sent after.</summary>
    void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken);

    /// <summary>A writable buffer for the next message; valid until <see cref="Send"/>.</summary>
    Span<byte> Loan(int length);

    /// <summary>Delivers the loaned message to every connected subscriber, waiting (never dropping) while they are full.</summary>
    void Send();

    /// <summary>
    /// Round trip only: waits for the next echo from any subscriber. False when the link closed or
    /// <paramref name="cancellationToken"/> fired. The span is valid until <see cref="ReleaseReply"/>.
    /// </summary>
    bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken);

    void ReleaseReply();

    /// <summary>
    /// Runs <paramref name="loop"/> over this endpoint's per-message calls as a struct type argument (an
    /// <see cref="IPublisherPath"/> of this transport's own), so the loop is compiled for this transport with direct calls.
    /// </summary>
    void Run(IPublisherLoop loop);
}

/// <summary>One subscriber's connections. Each receiver is driven by its own thread.</summary>
public interface ISubscriberEndpoint : IDisposable
{
    IReadOnlyList<IMessageReceiver> Receivers { get; }
}

/// <summary>
/// Receives the messages of one or more publishers. A stream transport has one receiver per publisher link;
/// a shared-memory service may deliver every publisher through one.
/// </summary>
public interface IMessageReceiver
{
    /// <summary>Publisher indexes whose messages arrive through this receiver.</summary>
    IReadOnlyList<int> PublisherIndexes { get; }

    /// <summary>
    /// Waits (per the endpoint's wait mode) for the next message. False when every link of this receiver closed
    /// or <paramref name="cancellationToken"/> fired. The span is valid until <see cref="Release"/>.
    /// </summary>
    bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken);

    /// <summary>Round trip only: sends <paramref name="message"/> back to the publisher it came from.</summary>
    void Reply(ReadOnlySpan<byte> message);

    void Release();

    /// <summary>
    /// Runs <paramref name="loop"/> over this receiver's per-message calls as a struct type argument (an
    /// <see cref="IReceiverPath"/> of this transport's own), so the loop is compiled for this transport with direct calls.
    /// </summary>
    void Run(IReceiverLoop loop);
}
