using System.Net;
using System.Net.Sockets;
using IpcBench.Transports.Streams;

namespace IpcBench.Transports.UnixSockets;

/// <summary>Stream sockets on a Unix domain endpoint: a socket file in the daemon's runtime directory.</summary>
public sealed class UnixSocketsTransport : SocketStreamTransport
{
    public override string Id => "uds";

    public override string Description => "Unix domain stream sockets (one connection per publisher-subscriber pair)";

    public override TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes);

    protected override Socket NewSocket() => new(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);

    protected override (EndPoint EndPoint, Action? OnDispose) ListenEndPoint(PublisherOptions options)
    {
        var path = Path.Combine(options.Environment.RuntimeDirectory, $"{options.ScenarioKey}-p{options.PublisherIndex}.sock");
        File.Delete(path);
        return (new UnixDomainSocketEndPoint(path), () => File.Delete(path));
    }

    protected override string AddressOf(Socket listening, EndPoint requested) => requested.ToString()!;

    protected override EndPoint ParseAddress(string address) => new UnixDomainSocketEndPoint(address);
}
