using System.Net.Sockets;
using IpcBench.Transports.Streams;

namespace IpcBench.Transports.UnixSockets;

/// <summary>Stream sockets on a Unix domain endpoint: a socket file in the daemon's runtime directory.</summary>
public sealed class UnixSocketsTransport : StreamTransport
{
    public override string Id => "uds";

    public override string Description => "Unix domain stream sockets (one connection per publisher-subscriber pair)";

    public override TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: false,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Block,
        MaxPayloadBytes: 64 * 1024 * 1024);

    protected override IStreamListener Listen(PublisherOptions options)
    {
        var path = Path.Combine(options.Environment.RuntimeDirectory, $"{options.ScenarioKey}-p{options.PublisherIndex}.sock");
        File.Delete(path);
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            socket.Bind(new UnixDomainSocketEndPoint(path));
            socket.Listen(backlog: 256);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        return new SocketListener(socket, path, options.WaitMode, onDispose: () => File.Delete(path));
    }

    protected override StreamLink Connect(string address, SubscriberOptions options, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            socket.Connect(new UnixDomainSocketEndPoint(address));
            return new SocketLink(socket, options.WaitMode);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
