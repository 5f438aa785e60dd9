using System.Net.Sockets;
using Microsoft.AspNetCore.Http;

namespace IpcBench.GrpcLite;

/// <summary>What a handler knows about the call it is serving.</summary>
public sealed class GrpcCallContext
{
    private string? _peer;

    internal GrpcCallContext(HttpContext httpContext, string method, DateTime? deadline, CancellationToken cancellationToken)
    {
        HttpContext = httpContext;
        Method = method;
        Deadline = deadline;
        CancellationToken = cancellationToken;
    }

    /// <summary>The underlying HTTP/2 request, for anything this type does not surface.</summary>
    public HttpContext HttpContext { get; }

    /// <summary>The request path, e.g. <c>/ipcbench.v1.BenchControl/StartScenario</c>.</summary>
    public string Method { get; }

    /// <summary>The client's deadline (UTC) when it sent <c>grpc-timeout</c>.</summary>
    public DateTime? Deadline { get; }

    /// <summary>
    /// Cancelled when the client goes away or cancels, when the deadline passes, or when the host begins
    /// shutting down (so long-running streams do not hold up shutdown).
    /// </summary>
    public CancellationToken CancellationToken { get; }

    /// <summary>The client's address in gRPC's peer notation: <c>ipv4:127.0.0.1:5000</c>, <c>ipv6:[::1]:5000</c>, <c>unix:</c> (a unix socket client has no address).</summary>
    public string Peer => _peer ??= DescribePeer(HttpContext);

    /// <summary>The name of the listener the call arrived on (<see cref="GrpcLiteListenOptions.Name"/>); null for an unnamed one.</summary>
    public string? Listener => HttpContext.Features.Get<IGrpcLiteListenerFeature>()?.Name;

    /// <summary>The service part of <see cref="Method"/>, e.g. <c>ipcbench.v1.BenchControl</c>; empty if the path has none.</summary>
    public string Service => GrpcProtocol.ServiceOf(Method);

    /// <summary>A request header (metadata) value, or null when absent; repeated values are joined with commas.</summary>
    public string? GetHeader(string name)
    {
        var values = HttpContext.Request.Headers[name];
        return values.Count == 0 ? null : values.ToString();
    }

    private static string DescribePeer(HttpContext httpContext)
    {
        var connection = httpContext.Connection;
        if (connection.RemoteIpAddress is { } ip)
        {
            if (ip.IsIPv4MappedToIPv6)
            {
                ip = ip.MapToIPv4();
            }

            return ip.AddressFamily == AddressFamily.InterNetworkV6
                ? $"ipv6:[{ip}]:{connection.RemotePort}"
                : $"ipv4:{ip}:{connection.RemotePort}";
        }

        // Kestrel exposes no endpoint for unix socket connections, and the client end of one is unnamed anyway.
        return "unix:";
    }
}
