using Grpc.Core;
using Grpc.Core.Interceptors;
using IpcBench.Daemon.Core;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The one place engine outcomes become gRPC statuses: a <see cref="RequestRefusedException"/> becomes the status of its
/// kind with its message (bounded in length); anything else unexpected is logged and becomes INTERNAL with a generic
/// message, so callers never see the daemon's internals.
/// </summary>
public sealed partial class RefusalInterceptor(ILogger<RefusalInterceptor> logger) : Interceptor
{
    public override async Task<TResponse> UnaryServerHandler<TRequest, TResponse>(
        TRequest request, ServerCallContext context, UnaryServerMethod<TRequest, TResponse> continuation)
    {
        try
        {
            return await continuation(request, context).ConfigureAwait(false);
        }
        catch (Exception e) when (Translate(e, context) is { } status)
        {
            throw status;
        }
    }

    public override async Task ServerStreamingServerHandler<TRequest, TResponse>(
        TRequest request, IServerStreamWriter<TResponse> responseStream, ServerCallContext context, ServerStreamingServerMethod<TRequest, TResponse> continuation)
    {
        try
        {
            await continuation(request, responseStream, context).ConfigureAwait(false);
        }
        catch (Exception e) when (Translate(e, context) is { } status)
        {
            throw status;
        }
    }

    public static StatusCode ToStatusCode(RefusalKind kind) => kind switch
    {
        RefusalKind.InvalidArgument => StatusCode.InvalidArgument,
        RefusalKind.NotFound => StatusCode.NotFound,
        RefusalKind.FailedPrecondition => StatusCode.FailedPrecondition,
        RefusalKind.ResourceExhausted => StatusCode.ResourceExhausted,
        RefusalKind.PermissionDenied => StatusCode.PermissionDenied,
        RefusalKind.Unavailable => StatusCode.Unavailable,
        _ => StatusCode.Unknown,
    };

    /// <summary>Null: let grpc-dotnet answer (statuses already chosen, and cancellation by the client or a deadline).</summary>
    private RpcException? Translate(Exception e, ServerCallContext context)
    {
        switch (e)
        {
            case RequestRefusedException refused:
                return new RpcException(new Status(ToStatusCode(refused.Kind), GrpcResponses.Limit(refused.Message)));
            case RpcException:
            case OperationCanceledException when context.CancellationToken.IsCancellationRequested:
                return null;
            default:
                LogUnexpected(logger, e, context.Method);
                return new RpcException(new Status(StatusCode.Internal, $"{context.Method} failed inside the daemon; its log has the details."));
        }
    }

    [LoggerMessage(Level = LogLevel.Error, Message = "{Method} failed unexpectedly; the caller receives INTERNAL")]
    private static partial void LogUnexpected(ILogger logger, Exception exception, string method);
}
