using System.Net;
using System.Net.Sockets;

namespace IpcBench.Transports.Streams;

/// <summary>The stream transports that are plain sockets: they differ only in the socket family and the endpoint.</summary>
public abstract class SocketStreamTransport : StreamTransport
{
    protected abstract Socket NewSocket();

    /// <summary>Where publisher <paramref name="options"/> listens, and what to remove when it stops.</summary>
    protected abstract (EndPoint EndPoint, Action? OnDispose) ListenEndPoint(PublisherOptions options);

    /// <summary>The address subscribers are given, from the bound socket (an ephemeral port is known only after bind).</summary>
    protected abstract string AddressOf(Socket listening, EndPoint requested);

    protected abstract EndPoint ParseAddress(string address);

    protected sealed override IStreamListener Listen(PublisherOptions options)
    {
        var (endPoint, onDispose) = ListenEndPoint(options);
        var socket = NewSocket();
        try
        {
            socket.Bind(endPoint);
            socket.Listen(backlog: 256);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        return new SocketListener(socket, AddressOf(socket, endPoint), options.WaitMode, onDispose);
    }

    protected sealed override StreamLink Connect(string address, SubscriberOptions options, CancellationToken cancellationToken)
    {
        var socket = NewSocket();
        try
        {
            socket.Connect(ParseAddress(address));
            return new SocketLink(socket, options.WaitMode);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }
}
