using Grpc.Net.Client;
using IpcBench.Transports.GrpcUds;

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

        var handler = UnixSocketHttp.Handler(address["unix:".Length..]);

        // A daemon that vanishes without closing the socket is only noticed by pinging (its death closes it anyway).
        handler.KeepAlivePingDelay = TimeSpan.FromSeconds(30);
        handler.KeepAlivePingTimeout = TimeSpan.FromSeconds(20);
        handler.KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests;

        // Only the authority matters: ConnectCallback makes the connection.
        return GrpcChannel.ForAddress("http://localhost", new GrpcChannelOptions { HttpHandler = handler, DisposeHttpClient = true });
    }
}
