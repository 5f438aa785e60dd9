using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.V1;
using Microsoft.Extensions.Hosting.Systemd;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;
using Serilog;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// All of the daemon's observability wiring, in the spirit of eShop's ServiceDefaults: logs (Serilog, console and an
/// optional compact JSON file), the Prometheus registry (served by <see cref="MetricsEndpoint"/>), OpenTelemetry traces
/// and runtime metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, and systemd readiness notification.
/// </summary>
public static class ObservabilityExtensions
{
    /// <summary>The OpenTelemetry SDK's own setting; configuration sees the environment variable of that name.</summary>
    public const string OtlpEndpointKey = "OTEL_EXPORTER_OTLP_ENDPOINT";
    public const string ServiceName = "ipcbench-daemon";

    /// <summary>
    /// The ASP.NET Core instrumentation's switch for gRPC server spans (named "ipcbench.v1.BenchControl/StartScenario",
    /// with rpc.* attributes and the gRPC status) instead of plain HTTP POST spans. Still experimental there, so it is a
    /// default here that configuration (or the environment) may turn off.
    /// </summary>
    public const string GrpcSpansKey = "OTEL_DOTNET_EXPERIMENTAL_ASPNETCORE_ENABLE_GRPC_INSTRUMENTATION";

    /// <summary>Set by systemd for Type=notify units: where READY=1 and STOPPING=1 go.</summary>
    public const string NotifySocketKey = "NOTIFY_SOCKET";

    // The agents' frequent progress reports are not control-plane calls: they would bury the calls worth tracing.
    private const string AgentLinkPath = "/" + ControlPlaneServices.AgentLink;

    public static WebApplicationBuilder AddIpcBenchObservability(this WebApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        // The bootstrap logger (Logging.Configure) becomes this one once configuration is known.
        builder.Services.AddSerilog((_, logger) => Logging.ConfigureHost(logger, builder.Configuration));
        builder.Services.AddSingleton<DaemonMetrics>();
        AddOpenTelemetry(builder);
        AddSystemd(builder);
        return builder;
    }

    /// <summary>
    /// OTLP export only when an endpoint is configured: without one no listener is attached, and activities and meters
    /// cost nothing. The SDK reads its other settings (OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_BSP_*, ...) from configuration.
    /// </summary>
    private static void AddOpenTelemetry(WebApplicationBuilder builder)
    {
        if (string.IsNullOrWhiteSpace(builder.Configuration[OtlpEndpointKey]))
        {
            return;
        }

        builder.Configuration[GrpcSpansKey] ??= "true";
        builder.Services.AddOpenTelemetry()
            .ConfigureResource(ConfigureResource)
            .WithTracing(tracing => tracing
                .AddAspNetCoreInstrumentation(aspNetCore => aspNetCore.Filter = context =>
                    context.Request.Path != MetricsEndpoint.Path && !context.Request.Path.StartsWithSegments(AgentLinkPath, StringComparison.Ordinal))
                .AddSource(Telemetry.SourceName))
            .WithMetrics(metrics => metrics
                .AddRuntimeInstrumentation()
                // Microsoft.AspNetCore.Hosting, .Server.Kestrel, .Routing, ...: request durations and connections.
                .AddAspNetCoreInstrumentation())
            .UseOtlpExporter();
    }

    /// <summary>
    /// READY=1 once the host has started (Kestrel listening, so the control and metrics ports accept connections) and
    /// STOPPING=1 when shutdown begins, by the package's SystemdLifetime. Its AddSystemd only recognises a service by
    /// its parent process being systemd (or by being PID 1); NOTIFY_SOCKET alone is what a Type=notify supervisor must
    /// set, and what later runtimes also accept, so it switches the same lifetime on.
    /// </summary>
    private static void AddSystemd(WebApplicationBuilder builder)
    {
        builder.Services.AddSystemd();
        if (!SystemdHelpers.IsSystemdService() && !string.IsNullOrEmpty(builder.Configuration[NotifySocketKey]))
        {
            builder.Services.AddSingleton<ISystemdNotifier, SystemdNotifier>();
            builder.Services.AddSingleton<IHostLifetime, SystemdLifetime>();
        }
    }

    /// <summary>The resource every span and metric carries: the service, this build and machine.</summary>
    internal static void ConfigureResource(ResourceBuilder resource)
    {
        ArgumentNullException.ThrowIfNull(resource);
        var build = BuildInfo.Current;
        resource.Clear()
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
}
