using System.Net;
using IpcBench.Daemon.Control;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Prometheus;

namespace IpcBench.Daemon.Observability;

/// <summary>/metrics on a port of its own, served by prometheus-net's exporter from <see cref="DaemonMetrics.Registry"/>.</summary>
public static class MetricsEndpoint
{
    public const string Path = "/metrics";

    /// <summary>The listener name of the metrics port (see <see cref="Listeners"/>).</summary>
    public const string Listener = "metrics";

    /// <summary>The metrics port: plain HTTP/1.1 (what Prometheus speaks), separate from the h2c control port.</summary>
    public static void ListenMetrics(this KestrelServerOptions kestrel, string metricsAddress, string? controlAddress)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        var (host, port) = ParseAddress(metricsAddress);
        if (!string.IsNullOrWhiteSpace(controlAddress) && !controlAddress.StartsWith("unix:", StringComparison.OrdinalIgnoreCase)
            && TryParseAddress(controlAddress, out _, out var controlPort) && controlPort == port)
        {
            throw new ArgumentException($"IpcBench:MetricsAddress '{metricsAddress}' uses the control port {port}; give metrics a port of their own (default 9464).");
        }

        static void Http1(ListenOptions listen)
        {
            listen.Protocols = HttpProtocols.Http1;
            listen.TagConnections(Listener);
        }

        if (host is null)
        {
            kestrel.ListenLocalhost(port, Http1);
        }
        else
        {
            kestrel.Listen(host, port, Http1);
        }
    }

    /// <summary>
    /// Requests on the metrics listener go to a branch of their own: GET or HEAD /metrics to the exporter, 405 for other
    /// methods there, 404 for any other path. Requests on the other listeners never enter it.
    /// </summary>
    public static WebApplication UseIpcBenchMetrics(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        var registry = app.Services.GetRequiredService<DaemonMetrics>().Registry;
        app.MapWhen(context => context.IsOnListener(Listener), metrics =>
        {
            metrics.Use(async (context, next) =>
            {
                if (context.Request.Path != Path)
                {
                    context.Response.StatusCode = StatusCodes.Status404NotFound;
                    context.Response.ContentType = "text/plain; charset=utf-8";
                    await context.Response.WriteAsync($"IpcBench serves Prometheus metrics at {Path} on this port.\n", context.RequestAborted).ConfigureAwait(false);
                    return;
                }

                if (!HttpMethods.IsGet(context.Request.Method) && !HttpMethods.IsHead(context.Request.Method))
                {
                    context.Response.StatusCode = StatusCodes.Status405MethodNotAllowed;
                    context.Response.Headers.Allow = "GET, HEAD";
                    return;
                }

                context.Response.Headers.CacheControl = "no-store";
                await next(context).ConfigureAwait(false);
            });
            // The classic text format only: what the dashboards and promtool were checked against, and no exemplars.
            metrics.UseMetricServer(settings =>
            {
                settings.Registry = registry;
                settings.EnableOpenMetrics = false;
            }, url: Path);
        });
        return app;
    }

    /// <summary>host:port, http://host:port, localhost:port, [::]:port; host null means localhost (both loopbacks).</summary>
    internal static (IPAddress? Host, int Port) ParseAddress(string address) =>
        TryParseAddress(address, out var host, out var port)
            ? (host, port)
            : throw new ArgumentException($"IpcBench:MetricsAddress '{address}' is not host:port with an IP address or localhost and a port 1..65535 (e.g. 127.0.0.1:9464, 0.0.0.0:9464).");

    private static bool TryParseAddress(string address, out IPAddress? host, out int port)
    {
        host = null;
        port = 0;
        var withScheme = address.Contains("://", StringComparison.Ordinal) ? address : "http://" + address;
        if (!Uri.TryCreate(withScheme, UriKind.Absolute, out var uri) || uri.Scheme != Uri.UriSchemeHttp
            || (uri.IsDefaultPort && !address.TrimEnd('/').EndsWith(":80", StringComparison.Ordinal))
            || uri.Port is < 1 or > 65535 || uri.AbsolutePath != "/")
        {
            return false;
        }

        port = uri.Port;
        if (string.Equals(uri.DnsSafeHost, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        return IPAddress.TryParse(uri.DnsSafeHost, out host);
    }
}
