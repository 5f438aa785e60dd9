using System.Net.Sockets;

namespace IpcBench.Transports.GrpcUds;

/// <summary>
/// HTTP/2 over a Unix domain socket for Grpc.Net.Client: the one way this code base dials a gRPC server on a socket file
/// (grpc-uds subscribers, and the agent's link to its daemon). Only the authority of the channel's address matters.
/// </summary>
public static class UnixSocketHttp
{
    public static SocketsHttpHandler Handler(string socketPath)
    {
        var endPoint = new UnixDomainSocketEndPoint(socketPath);
        return new SocketsHttpHandler
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
        };
    }
}
