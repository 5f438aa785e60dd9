using System.Runtime.CompilerServices;
using Google.Protobuf;
using Microsoft.AspNetCore.Http;

namespace IpcBench.GrpcLite;

/// <summary>One gRPC request on the server: message framing in both directions and the final status.</summary>
internal sealed class ServerCall(HttpContext httpContext, GrpcCallContext context, int maxReceiveMessageSize)
{
    private int _writing;
    private bool _wroteMessage;
    private bool _completed;

    public HttpContext HttpContext { get; } = httpContext;

    public GrpcCallContext Context { get; } = context;

    private CancellationToken Token => Context.CancellationToken;

    /// <summary>
    /// Reads the single request message of a unary or server-streaming call and checks the client sent nothing more.
    /// A request that is not one well-formed message is the caller's mistake, so every such failure is INVALID_ARGUMENT.
    /// </summary>
    public async ValueTask<T> ReadSingleMessageAsync<T>(MessageParser<T> parser)
        where T : class, IMessage<T>
    {
        var message = await ReadMessageAsync(parser)
            ?? throw new RpcException(StatusCode.InvalidArgument, "The request ended without a message.");
        if (await ReadMessageAsync(parser) is not null)
        {
            throw new RpcException(StatusCode.InvalidArgument, "The request carried more than one message for a method that takes one.");
        }

        return message;
    }

    public async IAsyncEnumerable<T> ReadAllMessagesAsync<T>(MessageParser<T> parser, [EnumeratorCancellation] CancellationToken cancellationToken = default)
        where T : class, IMessage<T>
    {
        while (await ReadMessageAsync(parser, cancellationToken) is { } message)
        {
            yield return message;
        }
    }

    /// <summary>Returns null when the client has finished sending.</summary>
    public async ValueTask<T?> ReadMessageAsync<T>(MessageParser<T> parser, CancellationToken cancellationToken = default)
        where T : class, IMessage<T>
    {
        var reader = HttpContext.Request.BodyReader;
        var token = cancellationToken.CanBeCanceled ? cancellationToken : Token;
        while (true)
        {
            var result = await reader.ReadAsync(token);
            var buffer = result.Buffer;
            if (result.IsCanceled)
            {
                throw new OperationCanceledException(token);
            }

            if (buffer.Length >= GrpcProtocol.FrameHeaderSize)
            {
                int length;
                try
                {
                    length = GrpcProtocol.ReadFrameHeader(buffer, maxReceiveMessageSize, "request", StatusCode.InvalidArgument);
                }
                catch
                {
                    reader.AdvanceTo(buffer.Start);
                    throw;
                }

                var frameLength = GrpcProtocol.FrameHeaderSize + length;
                if (buffer.Length >= frameLength)
                {
                    try
                    {
                        return parser.ParseFrom(buffer.Slice(GrpcProtocol.FrameHeaderSize, length));
                    }
                    catch (InvalidProtocolBufferException ex)
                    {
                        throw new RpcException(StatusCode.InvalidArgument, $"Failed to deserialize the request message: {ex.Message}", ex);
                    }
                    finally
                    {
                        reader.AdvanceTo(buffer.GetPosition(frameLength));
                    }
                }
            }

            if (result.IsCompleted)
            {
                reader.AdvanceTo(buffer.End);
                return buffer.IsEmpty
                    ? null
                    : throw new RpcException(StatusCode.InvalidArgument, "The request ended in the middle of a message.");
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    /// <summary>Buffers a message without flushing; used for a unary response, which goes out with the trailers.</summary>
    public void WriteMessage(IMessage message)
    {
        if (Interlocked.Exchange(ref _writing, 1) != 0)
        {
            throw new InvalidOperationException("Only one write can be pending at a time.");
        }

        try
        {
            WriteFrame(message);
        }
        finally
        {
            Volatile.Write(ref _writing, 0);
        }
    }

    public async Task WriteMessageAndFlushAsync(IMessage message, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (Interlocked.Exchange(ref _writing, 1) != 0)
        {
            throw new InvalidOperationException("Only one write can be pending at a time.");
        }

        try
        {
            WriteFrame(message);

            // A flush waits while the client is not reading; both the call's and the caller's tokens must be able to end that wait.
            using var linked = cancellationToken.CanBeCanceled && cancellationToken != Token
                ? CancellationTokenSource.CreateLinkedTokenSource(Token, cancellationToken)
                : null;
            var token = linked?.Token ?? Token;
            var result = await HttpContext.Response.BodyWriter.FlushAsync(token);
            if (result.IsCanceled)
            {
                throw new OperationCanceledException(token);
            }
        }
        finally
        {
            Volatile.Write(ref _writing, 0);
        }
    }

    /// <summary>Sends the status: as trailers after messages, or in the headers of a trailers-only response when nothing was sent.</summary>
    public void Complete(StatusCode code, string? message)
    {
        _completed = true;
        var response = HttpContext.Response;
        var status = ((int)code).ToString(System.Globalization.CultureInfo.InvariantCulture);
        if (!_wroteMessage && !response.HasStarted)
        {
            response.Headers[GrpcProtocol.StatusHeader] = status;
            if (!string.IsNullOrEmpty(message))
            {
                response.Headers[GrpcProtocol.MessageHeader] = GrpcProtocol.EncodeMessage(GrpcProtocol.LimitMessage(message));
            }

            return;
        }

        response.AppendTrailer(GrpcProtocol.StatusHeader, status);
        if (!string.IsNullOrEmpty(message))
        {
            response.AppendTrailer(GrpcProtocol.MessageHeader, GrpcProtocol.EncodeMessage(GrpcProtocol.LimitMessage(message)));
        }
    }

    private void WriteFrame(IMessage message)
    {
        if (_completed)
        {
            throw new InvalidOperationException($"The call {Context.Method} has completed; no more messages can be written.");
        }

        Token.ThrowIfCancellationRequested();
        var writer = HttpContext.Response.BodyWriter;
        GrpcProtocol.WriteFrameHeader(writer.GetSpan(GrpcProtocol.FrameHeaderSize), message.CalculateSize());
        writer.Advance(GrpcProtocol.FrameHeaderSize);
        message.WriteTo(writer);
        _wroteMessage = true;
    }
}

internal sealed class ServerStreamWriter<T>(ServerCall call) : IServerStreamWriter<T>
    where T : class, IMessage<T>
{
    public Task WriteAsync(T message, CancellationToken cancellationToken = default) =>
        call.WriteMessageAndFlushAsync(message, cancellationToken);
}
