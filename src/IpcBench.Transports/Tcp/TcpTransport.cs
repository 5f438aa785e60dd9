using System.Net;
using System.Net.Sockets;
using IpcBench.Transports.Streams;

namespace IpcBench.Transports.Tcp;

/// <summary>TCP over the loopback interface, Nagle off, on an ephemeral port per publisher.</summary>
public sealed class TcpTransport : StreamTransport
{
    public override string Id => "tcp";

    public override string Description => "TCP over loopback (127.0.0.1, TCP_NODELAY, one connection per publisher-subscriber pair)";

    public override TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: 64 * 1024 * 1024);

    protected override IStreamListener Listen(PublisherOptions options)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            socket.Listen(backlog: 256);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        var endPoint = (IPEndPoint)socket.LocalEndPoint!;
        return new SocketListener(socket, endPoint.ToString(), options.WaitMode);
    }

    protected override StreamLink Connect(string address, SubscriberOptions options, CancellationToken cancellationToken)
    {
        var endPoint = IPEndPoint.Parse(address);
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Connect(endPoint);
            return new SocketLink(socket, options.WaitMode);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
