using System.Diagnostics;
using IpcBench.GrpcLite;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// The daemon's traces: a span per control-plane call and a trace per scenario (see ScenarioRun). Activities cost
/// nothing unless a listener is attached, which only the OTLP exporter does (OTEL_EXPORTER_OTLP_ENDPOINT).
/// </summary>
public static class Telemetry
{
    public const string SourceName = "IpcBench.Daemon";

    public static readonly ActivitySource Source = new(SourceName, BuildInfo.Current.Version);

    /// <summary>Wraps a unary handler in a server span named like gRPC's conventions: "ipcbench.v1.BenchControl/StartScenario".</summary>
    public static Func<TRequest, GrpcCallContext, Task<TResponse>> Traced<TRequest, TResponse>(
        string service, string method, Func<TRequest, GrpcCallContext, Task<TResponse>> handler) =>
        async (request, context) =>
        {
            using var activity = StartCall(service, method, context);
            try
            {
                var response = await handler(request, context).ConfigureAwait(false);
                activity?.SetTag("rpc.grpc.status_code", (int)StatusCode.OK);
                return response;
            }
            catch (Exception e)
            {
                Failed(activity, e);
                throw;
            }
        };

    public static Func<TRequest, IServerStreamWriter<TResponse>, GrpcCallContext, Task> Traced<TRequest, TResponse>(
        string service, string method, Func<TRequest, IServerStreamWriter<TResponse>, GrpcCallContext, Task> handler) =>
        async (request, writer, context) =>
        {
            using var activity = StartCall(service, method, context);
            try
            {
                await handler(request, writer, context).ConfigureAwait(false);
                activity?.SetTag("rpc.grpc.status_code", (int)StatusCode.OK);
            }
            catch (Exception e)
            {
                Failed(activity, e);
                throw;
            }
        };

    private static Activity? StartCall(string service, string method, GrpcCallContext context)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        // A caller's W3C traceparent makes this call part of its trace (grpcurl -H 'traceparent: 00-...'). Otherwise a
        // root span: ASP.NET Core's own request activity (unrecorded, as nothing listens to it) must not become the
        // parent, or the parent-based sampler would drop this span with it. Current is async-local: this call's only.
        ActivityContext.TryParse(context.GetHeader("traceparent"), context.GetHeader("tracestate"), isRemote: true, out var parent);
        Activity.Current = null;
        var activity = Source.StartActivity($"{service}/{method}", ActivityKind.Server, parent);
        activity?.SetTag("rpc.system", "grpc")
            .SetTag("rpc.service", service)
            .SetTag("rpc.method", method)
            .SetTag("network.peer.address", context.Peer);
        return activity;
    }

    private static void Failed(Activity? activity, Exception e)
    {
        if (activity is null)
        {
            return;
        }

        var status = e is RpcException rpc ? rpc.StatusCode : StatusCode.Unknown;
        activity.SetTag("rpc.grpc.status_code", (int)status);
        activity.SetStatus(ActivityStatusCode.Error, e is RpcException r ? r.Detail : e.Message);
    }
}
