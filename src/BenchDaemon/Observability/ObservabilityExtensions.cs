using System.Net;
using System.Text;
using IpcBench.Daemon.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;
using Serilog;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// All of the daemon's observability wiring, in the spirit of eShop's ServiceDefaults: logs (Serilog, console and an
/// optional compact JSON file), the Prometheus endpoint on its own port, OpenTelemetry traces and runtime metrics over
/// OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, and systemd readiness notification.
/// </summary>
public static class ObservabilityExtensions
{
    public const string OtlpEndpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT";
    public const string ServiceName = "ipcbench-daemon";

    private static readonly UTF8Encoding Utf8 = new(encoderShouldEmitUTF8Identifier: false);

    /// <summary>The built-in meters of .NET and ASP.NET Core exported over OTLP (no instrumentation packages needed).</summary>
    public static readonly string[] RuntimeMeters = ["System.Runtime", "Microsoft.AspNetCore.Hosting", "Microsoft.AspNetCore.Server.Kestrel"];

    public static WebApplicationBuilder AddIpcBenchObservability(this WebApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var jsonLog = builder.Configuration[$"{DaemonOptions.SectionName}:{nameof(DaemonOptions.JsonLogFile)}"];
        if (!string.IsNullOrWhiteSpace(jsonLog))
        {
            Logging.AddJsonFile(jsonLog);
        }

        builder.Logging.ClearProviders();
        builder.Logging.AddSerilog(Log.Logger, dispose: false);

        // The SDK's own environment handling (OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME, OTEL_BSP_*, ...) applies;
        // only the endpoint variable decides whether anything is exported at all.
        if (!string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(OtlpEndpointVariable)))
        {
            builder.Services.AddSingleton(_ => Sdk.CreateTracerProviderBuilder()
                .SetResourceBuilder(Resource())
                .AddSource(Telemetry.SourceName)
                .AddOtlpExporter()
                .Build());
            builder.Services.AddSingleton(_ => Sdk.CreateMeterProviderBuilder()
                .SetResourceBuilder(Resource())
                .AddMeter(RuntimeMeters)
                .AddOtlpExporter()
                .Build());
            // First, so the providers exist before anything else starts; the container disposes (and so flushes) them
            // when the host is disposed, after every scenario has ended.
            builder.Services.Insert(0, ServiceDescriptor.Singleton<IHostedService, OpenTelemetryStarter>());
        }

        builder.Services.AddSingleton<DaemonMetrics>();
        builder.Services.AddHostedService<SystemdNotifier>();
        return builder;
    }

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

        static void Http1(Microsoft.AspNetCore.Server.Kestrel.Core.ListenOptions listen) => listen.Protocols = HttpProtocols.Http1;
        if (host is null)
        {
            kestrel.ListenLocalhost(port, Http1);
        }
        else
        {
            kestrel.Listen(host, port, Http1);
        }
    }

    /// <summary>GET /metrics on the metrics port (404 for anything else there); requests on other ports pass through.</summary>
    public static WebApplication UseIpcBenchMetrics(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        var address = app.Services.GetRequiredService<IOptions<DaemonOptions>>().Value.MetricsAddress;
        if (string.IsNullOrWhiteSpace(address) || !TryParseAddress(address, out _, out var port))
        {
            return app;
        }

        var metrics = app.Services.GetRequiredService<DaemonMetrics>();
        app.Use(async (context, next) =>
        {
            // Unix socket connections (the agent link) have no local IP address.
            if (context.Connection.LocalIpAddress is null || context.Connection.LocalPort != port)
            {
                await next(context).ConfigureAwait(false);
                return;
            }

            var request = context.Request;
            if (request.Path != "/metrics")
            {
                context.Response.StatusCode = StatusCodes.Status404NotFound;
                context.Response.ContentType = "text/plain; charset=utf-8";
                await context.Response.WriteAsync("IpcBench serves Prometheus metrics at /metrics on this port.\n", context.RequestAborted).ConfigureAwait(false);
                return;
            }

            if (!HttpMethods.IsGet(request.Method) && !HttpMethods.IsHead(request.Method))
            {
                context.Response.StatusCode = StatusCodes.Status405MethodNotAllowed;
                context.Response.Headers.Allow = "GET, HEAD";
                return;
            }

            context.Response.ContentType = PrometheusExposition.ContentType;
            context.Response.Headers.CacheControl = "no-store";
            if (HttpMethods.IsHead(request.Method))
            {
                return;
            }

            // Streamed (chunked): no one large string or array per scrape.
            var exposition = metrics.Collect();
            await using var writer = new StreamWriter(context.Response.Body, Utf8, bufferSize: 16 * 1024, leaveOpen: true);
            await exposition.WriteToAsync(writer, context.RequestAborted).ConfigureAwait(false);
            await writer.FlushAsync(context.RequestAborted).ConfigureAwait(false);
        });
        return app;
    }

    private static ResourceBuilder Resource()
    {
        var build = BuildInfo.Current;
        return ResourceBuilder.CreateEmpty()
            .AddService(ServiceName, serviceVersion: build.Version, serviceInstanceId: $"{Environment.MachineName}/{Environment.ProcessId}")
            .AddTelemetrySdk()
            .AddAttributes(
            [
                new("host.name", build.Machine.Hostname),
                new("host.cpu.model.name", build.Machine.CpuModel),
                new("os.type", "linux"),
                new("os.version", build.Machine.Kernel),
                new("process.runtime.description", build.DotnetVersion),
                new("ipcbench.iceoryx2.version", build.Iceoryx2Version),
            ])
            // Last, so OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the defaults above.
            .AddEnvironmentVariableDetector();
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

    /// <summary>Resolves the OpenTelemetry providers when the host starts, so they listen from the first call on.</summary>
    private sealed class OpenTelemetryStarter(TracerProvider tracing, MeterProvider metrics) : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken)
        {
            _ = tracing;
            _ = metrics;
            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
