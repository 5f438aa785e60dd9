using Grpc.Core;
using Grpc.Net.Client;

namespace IpcBench.Transports.GrpcUds;

/// <summary>The blocking edges between the synchronous transport contract and gRPC's async streams.</summary>
internal static class GrpcCalls
{
    /// <summary>
    /// The next message of a stream, waited for on this thread (the hot loops are synchronous threads of their own).
    /// False when the stream ended, the peer went away or <paramref name="cancellationToken"/> fired: a closed link.
    /// </summary>
    public static bool MoveNext<T>(IAsyncStreamReader<T> reader, CancellationToken cancellationToken)
    {
        try
        {
            return reader.MoveNext(cancellationToken).GetAwaiter().GetResult();
        }
        catch (RpcException)
        {
            return false;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        catch (IOException)
        {
            return false;
        }
    }

    /// <summary>A channel to a publisher's Unix socket: h2c, no TLS, one HTTP/2 connection.</summary>
    public static GrpcChannel UnixSocketChannel(string socketPath, int maxReceiveMessageBytes) =>
        GrpcChannel.ForAddress("http://localhost", new GrpcChannelOptions
        {
            HttpHandler = UnixSocketHttp.Handler(socketPath),
            DisposeHttpClient = true,
            MaxReceiveMessageSize = maxReceiveMessageBytes,
        });
}
