namespace IpcBench.Transports.GrpcUds;

/// <summary>
/// gRPC over a Unix domain socket, Microsoft's recommended IPC for .NET services on Linux: Grpc.AspNetCore on Kestrel
/// per publisher, Grpc.Net.Client per subscriber, protobuf messages, HTTP/2's own flow control.
/// </summary>
public sealed class GrpcUdsTransport : ITransport
{
    /// <summary>Round trip: the request metadata that names the calling subscriber.</summary>
    internal const string SubscriberIndexHeader = "ipcbench-subscriber-index";

    public string Id => "grpc-uds";

    public string Description =>
        "gRPC over a Unix socket (h2c): a Grpc.AspNetCore server on Kestrel per publisher, a server-streaming call per "
        + "subscriber (bidirectional in round trip) from Grpc.Net.Client. A message is a protobuf BenchMessage (header "
        + "fields + bytes payload: ~30 bytes of fields at typical values), framed by gRPC (5 bytes) in HTTP/2 DATA frames (9 bytes each, "
        + "at most 16 KiB of data per frame). Async throughout: BLOCK only.";

    public TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes,
        HotLoopAllocations: "Google.Protobuf and Grpc.Net.Client: each message is a BenchMessage object with a ByteString, "
            + "queued per subscriber stream; echoes are read through the client's async stream reader");

    public string? UnavailableReason => null;

    public IPublisherEndpoint CreatePublisher(PublisherOptions options) => GrpcUdsPublisher.Start(options);

    public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken)
    {
        var receivers = new List<GrpcUdsReceiver>(options.Publishers.Count);
        try
        {
            foreach (var publisher in options.Publishers)
            {
                receivers.Add(new GrpcUdsReceiver(publisher, options, cancellationToken));
            }
        }
        catch
        {
            receivers.ForEach(r => r.Dispose());
            throw;
        }

        return new Subscriber(receivers);
    }

    private sealed class Subscriber(List<GrpcUdsReceiver> receivers) : ISubscriberEndpoint
    {
        public IReadOnlyList<IMessageReceiver> Receivers => receivers;

        public void Dispose() => receivers.ForEach(r => r.Dispose());
    }
}
