using System.Net;
using System.Net.Sockets;
using IpcBench.Transports.Streams;

namespace IpcBench.Transports.Tcp;

/// <summary>TCP over the loopback interface, Nagle off, on an ephemeral port per publisher.</summary>
public sealed class TcpTransport : SocketStreamTransport
{
    public override string Id => "tcp";

    public override string Description => "TCP over loopback (127.0.0.1, TCP_NODELAY, one connection per publisher-subscriber pair)";

    public override TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes);

    protected override Socket NewSocket() => new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

    protected override (EndPoint EndPoint, Action? OnDispose) ListenEndPoint(PublisherOptions options) =>
        (new IPEndPoint(IPAddress.Loopback, 0), null);

    protected override string AddressOf(Socket listening, EndPoint requested) => listening.LocalEndPoint!.ToString()!;

    protected override EndPoint ParseAddress(string address) => IPEndPoint.Parse(address);
}
