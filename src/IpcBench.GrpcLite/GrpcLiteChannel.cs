using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Runtime.CompilerServices;
using Google.Protobuf;

namespace IpcBench.GrpcLite;

/// <summary>
/// A client connection to one gRPC server over HTTP/2: h2c by TCP or unix socket, or TLS (h2 by ALPN) for an
/// <c>https://</c> address. Thread-safe; create one per server and share it, since it owns the HTTP/2 connection pool.
/// </summary>
public sealed class GrpcLiteChannel : IDisposable
{
    private readonly HttpClient _http;

    /// <param name="address"><c>http://127.0.0.1:50051</c>, <c>127.0.0.1:50051</c>, <c>https://host:50051</c> or <c>unix:/path/to/socket</c>.</param>
    /// <param name="defaultHeaders">Sent with every call, e.g. <c>authorization: Bearer ...</c>.</param>
    /// <param name="trustedCertificate">
    /// For https: a CA or self-signed server certificate trusted in addition to the system's roots (grpcurl's -cacert).
    /// The server's name is still checked against its certificate.
    /// </param>
    public GrpcLiteChannel(string address, IEnumerable<KeyValuePair<string, string>>? defaultHeaders = null, X509Certificate2? trustedCertificate = null)
    {
        var parsed = GrpcLiteAddress.Parse(address);
        Address = address;
        var handler = new SocketsHttpHandler
        {
            // Kestrel allows 100 concurrent streams per connection; more calls than that must not queue behind them.
            EnableMultipleHttp2Connections = true,
            ConnectTimeout = TimeSpan.FromSeconds(20),

            // A server that vanishes without closing the socket (host down, network cut) is only noticed by pinging.
            KeepAlivePingDelay = TimeSpan.FromSeconds(30),
            KeepAlivePingTimeout = TimeSpan.FromSeconds(20),
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests,
        };

        if (trustedCertificate is not null)
        {
            handler.SslOptions.RemoteCertificateValidationCallback = (_, certificate, _, errors) =>
                TrustsServer(certificate, errors, trustedCertificate);
        }

        if (parsed.UnixSocketPath is { } path)
        {
            var endPoint = new UnixDomainSocketEndPoint(path);
            handler.ConnectCallback = async (_, cancellationToken) =>
            {
                var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                try
                {
                    await socket.ConnectAsync(endPoint, cancellationToken);
                    return new NetworkStream(socket, ownsSocket: true);
                }
                catch
                {
                    socket.Dispose();
                    throw;
                }
            };
        }

        _http = new HttpClient(handler)
        {
            // Only the authority matters for a unix socket; the connection itself is made by ConnectCallback.
            BaseAddress = parsed.HttpUri ?? new Uri("http://localhost"),
            Timeout = Timeout.InfiniteTimeSpan,
        };

        _http.DefaultRequestHeaders.TryAddWithoutValidation("te", "trailers");
        _http.DefaultRequestHeaders.TryAddWithoutValidation("user-agent", "ipcbench-grpclite/1.0");
        foreach (var (name, value) in defaultHeaders ?? [])
        {
            if (!_http.DefaultRequestHeaders.TryAddWithoutValidation(name, value))
            {
                _http.Dispose();
                throw new ArgumentException($"'{name}' cannot be sent as a request header.", nameof(defaultHeaders));
            }
        }
    }

    public string Address { get; }

    /// <summary>Largest response message accepted; bigger ones fail the call with RESOURCE_EXHAUSTED.</summary>
    public int MaxReceiveMessageSize { get; init; } = GrpcProtocol.DefaultMaxMessageSize;

    /// <summary>
    /// Calls a unary method. A non-OK status throws <see cref="RpcException"/> (UNAVAILABLE when the server cannot be
    /// reached or the connection breaks); cancelling <paramref name="cancellationToken"/> throws <see cref="OperationCanceledException"/>.
    /// </summary>
    /// <param name="method">The full path, e.g. <c>/ipcbench.v1.BenchControl/StartScenario</c>.</param>
    /// <param name="deadline">How long the call may take; sent as grpc-timeout and enforced here as DEADLINE_EXCEEDED.</param>
    public async Task<TResponse> UnaryAsync<TRequest, TResponse>(
        string method,
        TRequest request,
        MessageParser<TResponse> parser,
        CancellationToken cancellationToken = default,
        TimeSpan? deadline = null)
        where TRequest : IMessage
        where TResponse : class, IMessage<TResponse>
    {
        await using var call = await StartCallAsync(method, request, parser, deadline, cancellationToken);
        var response = await call.ReadMessageAsync()
            ?? throw new RpcException(StatusCode.Internal, $"{method} returned status OK without a response message.");
        if (await call.ReadMessageAsync() is not null)
        {
            throw new RpcException(StatusCode.Internal, $"{method} returned more than one response message for a unary call.");
        }

        return response;
    }

    /// <summary>
    /// Calls a server-streaming method; the call starts when enumeration does. Enumeration ends normally only on
    /// status OK: any other status, and the connection breaking (the server went away), throws <see cref="RpcException"/>.
    /// Stopping enumeration early cancels the call on the server.
    /// </summary>
    public async IAsyncEnumerable<TResponse> ServerStreamingAsync<TRequest, TResponse>(
        string method,
        TRequest request,
        MessageParser<TResponse> parser,
        [EnumeratorCancellation] CancellationToken cancellationToken = default,
        TimeSpan? deadline = null)
        where TRequest : IMessage
        where TResponse : class, IMessage<TResponse>
    {
        await using var call = await StartCallAsync(method, request, parser, deadline, cancellationToken);
        while (await call.ReadMessageAsync() is { } response)
        {
            yield return response;
        }
    }

    public void Dispose() => _http.Dispose();

    private static bool TrustsServer(X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2 trusted)
    {
        if (errors == SslPolicyErrors.None)
        {
            return true;
        }

        // Only an untrusted chain can be forgiven by the extra root; a wrong name or a missing certificate cannot.
        if (certificate is null || errors != SslPolicyErrors.RemoteCertificateChainErrors)
        {
            return false;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(trusted);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        using var server = new X509Certificate2(certificate);
        return chain.Build(server);
    }

    private async Task<ClientCall<TResponse>> StartCallAsync<TRequest, TResponse>(
        string method,
        TRequest request,
        MessageParser<TResponse> parser,
        TimeSpan? deadline,
        CancellationToken cancellationToken)
        where TRequest : IMessage
        where TResponse : class, IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(parser);
        if (string.IsNullOrEmpty(method) || method[0] != '/' || method.IndexOf('/', 1) < 0)
        {
            throw new ArgumentException($"'{method}' is not a gRPC method path; use /package.Service/Method.", nameof(method));
        }

        cancellationToken.ThrowIfCancellationRequested();
        if (deadline is { } d && d <= TimeSpan.Zero)
        {
            throw new RpcException(StatusCode.DeadlineExceeded, $"{method}: the deadline had already passed.");
        }

        var size = request.CalculateSize();
        var body = new byte[GrpcProtocol.FrameHeaderSize + size];
        GrpcProtocol.WriteFrameHeader(body, size);
        request.WriteTo(body.AsSpan(GrpcProtocol.FrameHeaderSize));

        var content = new ByteArrayContent(body);
        content.Headers.TryAddWithoutValidation("content-type", GrpcProtocol.ContentType);
        // HttpClient's default version only applies to its convenience methods, so each request must ask for h2c itself.
        var message = new HttpRequestMessage(HttpMethod.Post, method)
        {
            Content = content,
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        if (deadline is { } timeout)
        {
            message.Headers.TryAddWithoutValidation(GrpcProtocol.TimeoutHeader, GrpcProtocol.FormatTimeout(timeout));
        }

        var call = new ClientCall<TResponse>(Address, method, parser, MaxReceiveMessageSize, deadline, cancellationToken);
        try
        {
            await call.StartAsync(_http, message);
            return call;
        }
        catch
        {
            await call.DisposeAsync();
            throw;
        }
    }
}

/// <summary>One call's response side: status from headers or trailers, message framing, and error translation.</summary>
internal sealed class ClientCall<TResponse> : IAsyncDisposable
    where TResponse : class, IMessage<TResponse>
{
    private readonly string _address;
    private readonly string _method;
    private readonly MessageParser<TResponse> _parser;
    private readonly int _maxReceiveMessageSize;
    private readonly CancellationToken _callerToken;
    private readonly CancellationTokenSource _cts;
    private readonly byte[] _header = new byte[GrpcProtocol.FrameHeaderSize];
    private HttpResponseMessage? _response;
    private Stream? _body;
    private bool _finished;

    public ClientCall(string address, string method, MessageParser<TResponse> parser, int maxReceiveMessageSize, TimeSpan? deadline, CancellationToken callerToken)
    {
        _address = address;
        _method = method;
        _parser = parser;
        _maxReceiveMessageSize = maxReceiveMessageSize;
        _callerToken = callerToken;
        _cts = CancellationTokenSource.CreateLinkedTokenSource(callerToken);
        if (deadline is { } d)
        {
            _cts.CancelAfter(d);
        }
    }

    public async Task StartAsync(HttpClient http, HttpRequestMessage request)
    {
        try
        {
            _response = await http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, _cts.Token);
            if (_response.StatusCode != HttpStatusCode.OK)
            {
                throw new RpcException(FromHttpStatus(_response.StatusCode), $"{_method}: bad gRPC response, HTTP status {(int)_response.StatusCode} {_response.ReasonPhrase}.");
            }

            // grpc-status among the headers means a trailers-only response: the call is over and carries no messages.
            if (ReadStatus(_response.Headers) is { } status)
            {
                _finished = true;
                ThrowIfNotOk(status.Code, status.Message);
                return;
            }

            var contentType = _response.Content.Headers.ContentType?.ToString();
            if (!GrpcProtocol.IsGrpcContentType(contentType))
            {
                throw new RpcException(StatusCode.Internal, $"{_method}: bad gRPC response, content-type '{contentType}'.");
            }

            _body = await _response.Content.ReadAsStreamAsync(_cts.Token);
        }
        catch (Exception ex) when (ex is not RpcException)
        {
            throw Translate(ex);
        }
    }

    /// <summary>The next message, or null once the call has ended with status OK.</summary>
    public async ValueTask<TResponse?> ReadMessageAsync()
    {
        if (_finished)
        {
            return null;
        }

        try
        {
            var read = await _body!.ReadAtLeastAsync(_header, GrpcProtocol.FrameHeaderSize, throwOnEndOfStream: false, _cts.Token);
            if (read == 0)
            {
                _finished = true;
                var status = ReadStatus(_response!.TrailingHeaders)
                    ?? throw new RpcException(StatusCode.Internal, $"{_method}: the response ended without a grpc-status trailer, so its outcome is unknown.");
                ThrowIfNotOk(status.Code, status.Message);
                return null;
            }

            if (read < GrpcProtocol.FrameHeaderSize)
            {
                throw new RpcException(StatusCode.Internal, $"{_method}: the response ended inside a message header.");
            }

            var length = GrpcProtocol.ReadFrameHeader(_header, _maxReceiveMessageSize, "response", StatusCode.Internal);
            var payload = System.Buffers.ArrayPool<byte>.Shared.Rent(length);
            try
            {
                if (await _body.ReadAtLeastAsync(payload.AsMemory(0, length), length, throwOnEndOfStream: false, _cts.Token) < length)
                {
                    throw new RpcException(StatusCode.Internal, $"{_method}: the response ended inside a message.");
                }

                return _parser.ParseFrom(payload.AsSpan(0, length));
            }
            finally
            {
                System.Buffers.ArrayPool<byte>.Shared.Return(payload);
            }
        }
        catch (Exception ex) when (ex is not RpcException)
        {
            throw Translate(ex);
        }
    }

    public ValueTask DisposeAsync()
    {
        // Disposing before the end of the response resets the HTTP/2 stream, which the server sees as cancellation.
        _body?.Dispose();
        _response?.Dispose();
        _cts.Dispose();
        return ValueTask.CompletedTask;
    }

    private static (StatusCode Code, string? Message)? ReadStatus(System.Net.Http.Headers.HttpHeaders headers)
    {
        if (!headers.TryGetValues(GrpcProtocol.StatusHeader, out var statusValues))
        {
            return null;
        }

        var message = headers.TryGetValues(GrpcProtocol.MessageHeader, out var messageValues)
            ? GrpcProtocol.DecodeMessage(string.Join(",", messageValues))
            : null;
        var raw = statusValues.FirstOrDefault();
        return int.TryParse(raw, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var code)
            ? ((StatusCode)code, message)
            : (StatusCode.Unknown, $"Invalid grpc-status '{raw}'. {message}");
    }

    private static void ThrowIfNotOk(StatusCode code, string? message)
    {
        if (code != StatusCode.OK)
        {
            throw new RpcException(code, message ?? "");
        }
    }

    /// <summary>gRPC's mapping for responses that are not gRPC at all, typically from a proxy.</summary>
    private static StatusCode FromHttpStatus(HttpStatusCode status) => status switch
    {
        HttpStatusCode.BadRequest => StatusCode.Internal,
        HttpStatusCode.Unauthorized => StatusCode.Unauthenticated,
        HttpStatusCode.Forbidden => StatusCode.PermissionDenied,
        HttpStatusCode.NotFound => StatusCode.Unimplemented,
        HttpStatusCode.TooManyRequests or HttpStatusCode.BadGateway or HttpStatusCode.ServiceUnavailable or HttpStatusCode.GatewayTimeout => StatusCode.Unavailable,
        _ => StatusCode.Unknown,
    };

    private Exception Translate(Exception ex)
    {
        if (_callerToken.IsCancellationRequested)
        {
            return new OperationCanceledException($"{_method} was cancelled by the caller.", ex, _callerToken);
        }

        if (_cts.IsCancellationRequested)
        {
            return new RpcException(StatusCode.DeadlineExceeded, $"{_method}: deadline exceeded.", ex);
        }

        return ex switch
        {
            InvalidProtocolBufferException => new RpcException(StatusCode.Internal, $"{_method}: failed to deserialize the response message: {ex.Message}", ex),
            // HTTP/2 error codes: CANCEL is the server abandoning this call; PROTOCOL_ERROR, FRAME_SIZE_ERROR and
            // COMPRESSION_ERROR are bugs on one side. Anything else means the connection or server failed.
            HttpProtocolException { ErrorCode: 0x8 } => new RpcException(StatusCode.Cancelled, $"{_method}: the server cancelled the call.", ex),
            HttpProtocolException { ErrorCode: 0x1 or 0x6 or 0x9 } => new RpcException(StatusCode.Internal, $"{_method}: HTTP/2 protocol error: {ex.Message}", ex),
            HttpRequestException or IOException or SocketException =>
                new RpcException(StatusCode.Unavailable, $"{_method}: the connection to {_address} failed or was lost: {ex.Message}", ex),
            OperationCanceledException => new RpcException(StatusCode.Cancelled, $"{_method}: the call was cancelled: {ex.Message}", ex),
            _ => ex,
        };
    }
}
