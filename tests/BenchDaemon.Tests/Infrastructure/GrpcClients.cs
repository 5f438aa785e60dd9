using System.Net.Security;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Cryptography.X509Certificates;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using IpcBench.Daemon.Lab;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Grpc.Net.Client channels to a test daemon (<c>http://host:port</c>, <c>https://host:port</c> or <c>unix:/path</c>),
/// plus calls by method path, for tests that send a method a message it does not take or call a service the address
/// does not serve: the generated clients can only make well-typed calls to the right service.
/// </summary>
internal static class GrpcClients
{
    /// <param name="authorization">Sent as the authorization header of every call, e.g. "Bearer &lt;token&gt;".</param>
    /// <param name="trustedCertificate">For https: a self-signed server certificate trusted besides the system's roots (grpcurl's -cacert).</param>
    public static GrpcChannel Create(string address, string? authorization = null, X509Certificate2? trustedCertificate = null,
        IList<Grpc.Net.Compression.ICompressionProvider>? compressionProviders = null)
    {
        var sockets = new SocketsHttpHandler { EnableMultipleHttp2Connections = true };
        if (trustedCertificate is not null)
        {
            sockets.SslOptions.RemoteCertificateValidationCallback = (_, certificate, _, errors) => TrustsServer(certificate, errors, trustedCertificate);
        }

        var uri = address;
        if (address.StartsWith("unix:", StringComparison.Ordinal))
        {
            var endPoint = new UnixDomainSocketEndPoint(address["unix:".Length..]);
            sockets.ConnectCallback = async (_, cancellationToken) =>
            {
                var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                await socket.ConnectAsync(endPoint, cancellationToken);
                return new NetworkStream(socket, ownsSocket: true);
            };
            uri = "http://localhost";
        }

        HttpMessageHandler handler = authorization is null ? sockets : new AuthorizationHeader(authorization) { InnerHandler = sockets };
        return GrpcChannel.ForAddress(uri, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            // As with any .NET API: cancelling the caller's token throws OperationCanceledException, not RpcException(Cancelled).
            ThrowOperationCanceledOnCancellation = true,
            CompressionProviders = compressionProviders,
        });
    }

    public static async Task<TResponse> UnaryAsync<TRequest, TResponse>(this GrpcChannel channel, string path, TRequest request, MessageParser<TResponse> parser,
        CancellationToken cancellationToken = default, TimeSpan? deadline = null)
        where TRequest : class, IMessage
        where TResponse : class, IMessage<TResponse>
    {
        using var call = channel.CreateCallInvoker().AsyncUnaryCall(MethodFor<TRequest, TResponse>(MethodType.Unary, path, parser), null, Options(cancellationToken, deadline), request);
        return await call.ResponseAsync;
    }

    public static async IAsyncEnumerable<TResponse> ServerStreamingAsync<TRequest, TResponse>(this GrpcChannel channel, string path, TRequest request,
        MessageParser<TResponse> parser, [EnumeratorCancellation] CancellationToken cancellationToken = default)
        where TRequest : class, IMessage
        where TResponse : class, IMessage<TResponse>
    {
        using var call = channel.CreateCallInvoker().AsyncServerStreamingCall(MethodFor<TRequest, TResponse>(MethodType.ServerStreaming, path, parser), null, Options(cancellationToken, null), request);
        while (await call.ResponseStream.MoveNext(cancellationToken))
        {
            yield return call.ResponseStream.Current;
        }
    }

    private static CallOptions Options(CancellationToken cancellationToken, TimeSpan? deadline) =>
        new(deadline: deadline is { } d ? DateTime.UtcNow + d : null, cancellationToken: cancellationToken);

    private static Method<TRequest, TResponse> MethodFor<TRequest, TResponse>(MethodType type, string path, MessageParser<TResponse> parser)
        where TRequest : class, IMessage
        where TResponse : class, IMessage<TResponse>
    {
        var slash = path.LastIndexOf('/');
        return new Method<TRequest, TResponse>(type, path[1..slash], path[(slash + 1)..],
            Marshallers.Create<TRequest>(r => r.ToByteArray(), _ => throw new NotSupportedException("requests are only sent")),
            Marshallers.Create(r => r.ToByteArray(), parser.ParseFrom));
    }

    /// <summary>The rule `run --daemons` uses: the system's verdict, or an untrusted chain ending in the extra root; never a wrong name.</summary>
    private static bool TrustsServer(X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2 trusted) =>
        LabChannels.Trusts(certificate, errors, [trusted]);

    private sealed class AuthorizationHeader(string value) : DelegatingHandler
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            request.Headers.TryAddWithoutValidation("authorization", value);
            return base.SendAsync(request, cancellationToken);
        }
    }
}
