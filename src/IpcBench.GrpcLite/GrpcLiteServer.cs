using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace IpcBench.GrpcLite;

/// <summary>Runs every gRPC request: validates it, gives the handler a context, and turns the outcome into a status.</summary>
internal sealed partial class GrpcLiteServer(
    IOptions<GrpcLiteServerOptions> options,
    IHostApplicationLifetime lifetime,
    IEnumerable<IGrpcLiteCallFilter> filters,
    ILogger<GrpcLiteServer> logger)
{
    // Beyond this CancelAfter overflows, and such a deadline is indistinguishable from none.
    private static readonly TimeSpan LongestEnforcedDeadline = TimeSpan.FromDays(30);

    private readonly int _maxReceiveMessageSize = options.Value.MaxReceiveMessageSize > 0
        ? options.Value.MaxReceiveMessageSize
        : throw new OptionsValidationException(nameof(GrpcLiteServerOptions), typeof(GrpcLiteServerOptions), ["MaxReceiveMessageSize must be positive."]);

    private readonly IGrpcLiteCallFilter[] _filters = [.. filters];

    public GrpcLiteServiceRegistry Registry { get; } = new();

    /// <summary>Set once the catch-all UNIMPLEMENTED route exists, so it is mapped a single time.</summary>
    public bool UnimplementedRouteMapped { get; set; }

    public async Task HandleAsync(HttpContext httpContext, string method, Func<ServerCall, Task> invoke)
    {
        if (!await AcceptAsync(httpContext))
        {
            return;
        }

        var request = httpContext.Request;
        httpContext.Response.ContentType = GrpcProtocol.ContentType;

        // Streams live as long as the client wants and messages are limited one by one, so Kestrel's
        // whole-body limits would only cut long calls short.
        if (httpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } maxBodySize)
        {
            maxBodySize.MaxRequestBodySize = null;
        }

        if (httpContext.Features.Get<IHttpMinRequestBodyDataRateFeature>() is { } minDataRate)
        {
            minDataRate.MinDataRate = null;
        }

        TimeSpan? timeout = GrpcProtocol.TryParseTimeout(request.Headers[GrpcProtocol.TimeoutHeader], out var parsed) && parsed < LongestEnforcedDeadline
            ? parsed
            : null;
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(httpContext.RequestAborted, lifetime.ApplicationStopping);
        if (timeout is { } t)
        {
            cts.CancelAfter(t);
        }

        var context = new GrpcCallContext(httpContext, method, DateTime.UtcNow + timeout, cts.Token);
        var call = new ServerCall(httpContext, context, _maxReceiveMessageSize);
        try
        {
            // Filters first: a caller they refuse learns nothing else, not even whether the method exists.
            foreach (var filter in _filters)
            {
                await filter.OnCallAsync(context);
            }

            if (!Registry.IsServedOn(context.Service, context.Listener))
            {
                throw new RpcException(StatusCode.Unimplemented, $"Service {context.Service} is not served on this endpoint.");
            }

            var encoding = request.Headers[GrpcProtocol.EncodingHeader].ToString();
            if (encoding.Length > 0 && encoding != "identity")
            {
                httpContext.Response.Headers[GrpcProtocol.AcceptEncodingHeader] = "identity";
                throw new RpcException(StatusCode.Unimplemented, $"Unsupported grpc-encoding '{encoding}'; this server only accepts identity (uncompressed) messages.");
            }

            await invoke(call);
            call.Complete(StatusCode.OK, null);
        }
        catch (Exception ex)
        {
            Fail(call, ex);
        }
    }

    /// <summary>The catch-all for gRPC paths nobody registered.</summary>
    public async Task HandleUnimplementedAsync(HttpContext httpContext)
    {
        var path = httpContext.Request.Path.Value ?? "";
        if (!GrpcProtocol.IsGrpcContentType(httpContext.Request.ContentType))
        {
            // Not a gRPC request at all: behave like any other unknown route.
            httpContext.Response.StatusCode = StatusCodes.Status404NotFound;
            return;
        }

        var slash = path.IndexOf('/', 1);
        var service = slash > 1 ? path[1..slash] : "";
        var detail = Registry.Contains(service)
            ? $"Method {path} is not implemented by this server."
            : $"Service {service} is not implemented by this server.";
        await HandleAsync(httpContext, path, _ => throw new RpcException(StatusCode.Unimplemented, detail));
    }

    private static async Task<bool> AcceptAsync(HttpContext httpContext)
    {
        var request = httpContext.Request;
        if (!HttpProtocol.IsHttp2(request.Protocol) && !HttpProtocol.IsHttp3(request.Protocol))
        {
            httpContext.Response.StatusCode = StatusCodes.Status426UpgradeRequired;
            await httpContext.Response.WriteAsync($"gRPC requires HTTP/2, not {request.Protocol}. Plain-text clients must use HTTP/2 with prior knowledge (h2c).");
            return false;
        }

        if (!GrpcProtocol.IsGrpcContentType(request.ContentType))
        {
            httpContext.Response.StatusCode = StatusCodes.Status415UnsupportedMediaType;
            await httpContext.Response.WriteAsync($"Content-Type '{request.ContentType}' is not supported; gRPC requests must send application/grpc (protobuf).");
            return false;
        }

        return true;
    }

    private void Fail(ServerCall call, Exception ex)
    {
        var httpContext = call.HttpContext;
        var method = call.Context.Method;
        if (httpContext.RequestAborted.IsCancellationRequested)
        {
            // The client is gone: there is nobody to send a status to, and this is not the handler's fault.
            LogClientGone(logger, method, ex.GetType().Name);
            return;
        }

        StatusCode code;
        string detail;
        switch (ex)
        {
            case RpcException rpc:
                (code, detail) = (rpc.StatusCode, rpc.Detail);
                LogRpcFailure(logger, method, code, detail);
                break;
            case OperationCanceledException when call.Context.CancellationToken.IsCancellationRequested:
                (code, detail) = lifetime.ApplicationStopping.IsCancellationRequested
                    ? (StatusCode.Unavailable, "The server is shutting down.")
                    : (StatusCode.DeadlineExceeded, "Deadline exceeded.");
                LogRpcFailure(logger, method, code, detail);
                break;
            default:
                (code, detail) = (StatusCode.Internal, $"Exception was thrown by handler: {ex.GetType().Name}: {ex.Message}");
                LogHandlerException(logger, ex, method);
                break;
        }

        try
        {
            call.Complete(code, detail);
        }
        catch (Exception trailerEx)
        {
            // Only possible if the response is already broken; the client will see a reset instead.
            LogClientGone(logger, method, trailerEx.GetType().Name);
        }
    }

    [LoggerMessage(Level = LogLevel.Error, Message = "gRPC handler for {Method} threw; the client receives INTERNAL.")]
    private static partial void LogHandlerException(ILogger logger, Exception exception, string method);

    [LoggerMessage(Level = LogLevel.Debug, Message = "gRPC call {Method} ended with {StatusCode}: {Detail}")]
    private static partial void LogRpcFailure(ILogger logger, string method, StatusCode statusCode, string detail);

    [LoggerMessage(Level = LogLevel.Debug, Message = "gRPC call {Method} ended after the client went away ({ExceptionType}).")]
    private static partial void LogClientGone(ILogger logger, string method, string exceptionType);
}
