namespace IpcBench.Transports.ZeroMq;

/// <summary>
/// ZeroMQ through NetMQ, the pure C# port. The pattern is ROUTER (publisher) to one DEALER per subscriber rather than
/// PUB/SUB, because PUB drops messages for a subscriber at its high-water mark and this benchmark must lose nothing.
/// </summary>
public sealed class ZeroMqTransport : ITransport
{
    public string Id => "zeromq";

    public string Description =>
        "ZeroMQ (NetMQ 4.0.4.5, C#) ROUTER→DEALER over TCP loopback (tcp://127.0.0.1, ephemeral port per publisher); "
        + "NetMQ's ipc:// is TCP loopback too (a port hashed from the name), so it is not used. The ROUTER addresses each "
        + "message to every subscriber's DEALER in turn with ROUTER_MANDATORY: a full subscriber makes the publisher wait "
        + "and the high-water mark (≤ 1000 messages, ≤ 16 MiB per queue) only bounds queues, never drops";

    public TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes,
        HotLoopAllocations: "NetMQ: a fresh array per message, because its I/O thread sends asynchronously out of the "
            + "caller's array and a GC-backed Msg has no release callback to say when the array is free again");

    public string? UnavailableReason => null;

    public IPublisherEndpoint CreatePublisher(PublisherOptions options) => new ZeroMqPublisherEndpoint(options);

    public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken) =>
        ZeroMqSubscriberEndpoint.Connect(options, cancellationToken);
}
