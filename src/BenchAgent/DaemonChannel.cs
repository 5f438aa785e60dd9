using System.Net.Sockets;
using Grpc.Net.Client;

namespace IpcBench.Agent;

/// <summary>The agent's gRPC channel to its daemon: h2c over the daemon's private Unix socket (<c>unix:/path</c>).</summary>
public static class DaemonChannel
{
    public static GrpcChannel Create(string address)
    {
        if (!address.StartsWith("unix:", StringComparison.Ordinal) || address.Length == "unix:".Length)
        {
            throw new ArgumentException($"--daemon '{address}' is not unix:/path/to/socket; agents reach their daemon over its Unix socket only.");
        }

        var endPoint = new UnixDomainSocketEndPoint(address["unix:".Length..]);
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = async (_, cancellationToken) =>
            {
                var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                try
                {
                    await socket.ConnectAsync(endPoint, cancellationToken).ConfigureAwait(false);
                    return new NetworkStream(socket, ownsSocket: true);
                }
                catch
                {
                    socket.Dispose();
                    throw;
                }
            },
            // A daemon that vanishes without closing the socket is only noticed by pinging (its death closes it anyway).
            KeepAlivePingDelay = TimeSpan.FromSeconds(30),
            KeepAlivePingTimeout = TimeSpan.FromSeconds(20),
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests,
        };

        // Only the authority matters: ConnectCallback makes the connection.
        return GrpcChannel.ForAddress("http://localhost", new GrpcChannelOptions { HttpHandler = handler, DisposeHttpClient = true });
    }
}
