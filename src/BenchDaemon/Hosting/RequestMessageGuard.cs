using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Reflection;
using Google.Protobuf;
using Grpc.AspNetCore.Server;
using Grpc.Core;
using IpcBench.Daemon.Control;

namespace IpcBench.Daemon.Hosting;

/// <summary>
/// Requests that are not one well-formed message are the caller's mistake: INVALID_ARGUMENT naming what is wrong, as
/// the control plane has always answered. grpc-dotnet reads the request before any interceptor runs and answers such
/// bytes with INTERNAL or UNKNOWN (and an error log with a stack trace per call), which tells a caller the daemon broke.
/// So the single request message of unary and server-streaming calls is checked here, before grpc-dotnet reads it; the
/// bytes are only examined, not consumed, and grpc-dotnet then reads the same ones. Compressed messages are decompressed
/// and parsed by grpc-dotnet alone.
/// </summary>
public static class RequestMessageGuard
{
    private const int HeaderSize = 5;

    /// <summary>grpc-dotnet's default, which the daemon keeps (GrpcServiceOptions.MaxReceiveMessageSize).</summary>
    private const int MaxMessageSize = 4 * 1024 * 1024;

    /// <summary>
    /// The parser of each unary and server-streaming method's request type, found on its first call from the method
    /// grpc-dotnet routed to (its Method&lt;TRequest, TResponse&gt;) rather than from the services' descriptors. Building
    /// those (every file's reflection tables) at startup, with the reflection service's, made a daemon compile 5,220
    /// methods before it answered health, against 3,555 without, and take 1.60 against 1.32 CPU-s by a second after
    /// (8 interleaved starts each, 2026-11-30): about a hundred test daemons start in CI, and a lab's daemons on boot.
    /// </summary>
    private static readonly ConcurrentDictionary<Type, MessageParser?> Parsers = new();

    public static IApplicationBuilder UseRequestMessageGuard(this IApplicationBuilder app) =>
        app.Use(async (context, next) =>
        {
            if (context.GetEndpoint()?.Metadata.GetMetadata<GrpcMethodMetadata>() is { Method.Type: MethodType.Unary or MethodType.ServerStreaming } grpc
                && Parsers.GetOrAdd(grpc.Method.GetType(), ParserOf) is { } parser
                && await ProblemAsync(context, parser).ConfigureAwait(false) is { } problem)
            {
                await GrpcResponses.WriteStatusAsync(context, problem.Code, problem.Message).ConfigureAwait(false);
                return;
            }

            await next(context).ConfigureAwait(false);
        });

    /// <summary>The static Parser of TRequest in a Method&lt;TRequest, TResponse&gt; of generated code; null for anything else.</summary>
    private static MessageParser? ParserOf(Type method) =>
        method.IsGenericType && method.GetGenericTypeDefinition() == typeof(Method<,>)
            ? method.GetGenericArguments()[0].GetProperty("Parser", BindingFlags.Public | BindingFlags.Static)?.GetValue(null) as MessageParser
            : null;

    private static async Task<(StatusCode Code, string Message)?> ProblemAsync(HttpContext context, MessageParser parser)
    {
        var reader = context.Request.BodyReader;
        while (true)
        {
            var result = await reader.ReadAsync(context.RequestAborted).ConfigureAwait(false);
            var buffer = result.Buffer;
            var problem = Check(buffer, result.IsCompleted, parser, context.Request.Headers["grpc-encoding"].ToString());
            // Examined, not consumed: grpc-dotnet's own read gets every byte again.
            reader.AdvanceTo(buffer.Start, buffer.End);
            if (problem is not null || result.IsCompleted)
            {
                return problem;
            }
        }
    }

    /// <summary>Null while the request may still turn out well (more bytes to come) and when it is one good message.</summary>
    private static (StatusCode, string)? Check(ReadOnlySequence<byte> buffer, bool complete, MessageParser parser, string encoding)
    {
        if (buffer.Length < HeaderSize)
        {
            return !complete ? null
                : buffer.IsEmpty ? Invalid("The request ended without a message.")
                : Invalid("The request ended in the middle of a message.");
        }

        Span<byte> header = stackalloc byte[HeaderSize];
        buffer.Slice(0, HeaderSize).CopyTo(header);
        if (header[0] > 1)
        {
            return Invalid($"Invalid request message flags 0x{header[0]:x2}.");
        }

        if (header[0] == 1 && encoding is "" or "identity")
        {
            return Invalid("The request message is compressed but grpc-encoding names no compression; send gzip or deflate with grpc-encoding, or send it uncompressed.");
        }

        var length = BinaryPrimitives.ReadUInt32BigEndian(header[1..]);
        if (length > MaxMessageSize)
        {
            return (StatusCode.ResourceExhausted, $"Received request message larger than max ({length} vs. {MaxMessageSize}).");
        }

        if (buffer.Length > HeaderSize + length)
        {
            return Invalid("The request carried more than one message for a method that takes one.");
        }

        if (!complete)
        {
            return null;
        }

        if (buffer.Length < HeaderSize + length)
        {
            return Invalid("The request ended in the middle of a message.");
        }

        if (header[0] == 1)
        {
            return null;
        }

        try
        {
            parser.ParseFrom(buffer.Slice(HeaderSize));
            return null;
        }
        catch (InvalidProtocolBufferException e)
        {
            return Invalid($"Failed to deserialize the request message: {e.Message}");
        }
    }

    private static (StatusCode, string) Invalid(string message) => (StatusCode.InvalidArgument, message);
}
