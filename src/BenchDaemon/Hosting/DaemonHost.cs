using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;
using IpcBench.GrpcLite;
using IpcBench.Transports;
using IpcBench.V1;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Hosting;

/// <summary>Everything the daemon wires up, in one place: options, transports, the engine, gRPC endpoints and observability.</summary>
public static class DaemonHost
{
    public static WebApplication Build(string[] configurationArguments, Action<DaemonOptions>? overrides = null)
    {
        var builder = WebApplication.CreateBuilder(new WebApplicationOptions
        {
            Args = configurationArguments,
            ContentRootPath = AppContext.BaseDirectory,
        });

        builder.AddIpcBenchObservability();

        var options = builder.Services.AddOptions<DaemonOptions>()
            .Bind(builder.Configuration.GetSection(DaemonOptions.SectionName))
            .ValidateDataAnnotations()
            .ValidateOnStart();
        if (overrides is not null)
        {
            options.PostConfigure(overrides);
        }

        builder.Services.AddSingleton<IValidateOptions<DaemonOptions>, ControlPlaneOptionsValidator>();
        builder.Services.AddSingleton<ControlPlaneSecurity>();
        builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = TimeSpan.FromSeconds(5));
        builder.Services.AddSingleton(_ => TransportRegistry.CreateDefault());
        builder.Services.AddSingleton<RuntimeDirectory>();
        builder.Services.AddSingleton<AgentDirectory>();
        builder.Services.AddSingleton<AgentLauncher>();
        builder.Services.AddSingleton<SpecValidator>();
        builder.Services.AddSingleton<AdmissionControl>();
        // Before ScenarioManager: hosted services stop in reverse order, so the writer flushes after scenarios have ended.
        builder.Services.AddSingleton<StoreWriter>();
        builder.Services.AddSingleton<IScenarioRecorder>(services => services.GetRequiredService<StoreWriter>());
        builder.Services.AddHostedService(services => services.GetRequiredService<StoreWriter>());
        builder.Services.AddSingleton<ScenarioManager>();
        builder.Services.AddHostedService(services => services.GetRequiredService<ScenarioManager>());
        builder.Services.AddSingleton<ScenarioCatalog>();
        builder.Services.AddSingleton<BenchControlService>();
        builder.Services.AddSingleton<AgentLinkService>();
        builder.Services.AddGrpcLite();
        // The token guards the control port only: agents prove themselves on their socket with per-agent tokens.
        builder.Services.AddGrpcLiteBearerToken()
            .Configure<ControlPlaneSecurity>((bearer, security) =>
            {
                bearer.Enabled = security.TokenRequired;
                bearer.Token = security.Token;
                bearer.Listeners.Add(ControlPlaneSecurity.ControlListener);
                bearer.Realm = "ipcbench";
            });

        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            var daemon = kestrel.ApplicationServices.GetRequiredService<IOptions<DaemonOptions>>().Value;
            var runtime = kestrel.ApplicationServices.GetRequiredService<RuntimeDirectory>();
            var security = kestrel.ApplicationServices.GetRequiredService<ControlPlaneSecurity>();
            if (!string.IsNullOrWhiteSpace(daemon.ControlAddress))
            {
                kestrel.ListenGrpcLite(daemon.ControlAddress, listen =>
                {
                    listen.Name = ControlPlaneSecurity.ControlListener;
                    listen.Certificate = security.Certificate;
                });
            }

            if (!string.IsNullOrWhiteSpace(daemon.MetricsAddress))
            {
                kestrel.ListenMetrics(daemon.MetricsAddress, daemon.ControlAddress);
            }

            kestrel.ListenGrpcLite("unix:" + runtime.AgentSocketPath, listen => listen.Name = ControlPlaneSecurity.AgentListener);
        });

        var app = builder.Build();
        // Kestrel creates the socket with the process umask; only the daemon's user (its agents) may connect. The 0700
        // directory already keeps others out; this keeps the socket private even if the directory were ever opened up.
        app.Lifetime.ApplicationStarted.Register(() => app.Services.GetRequiredService<RuntimeDirectory>().RestrictAgentSocket());
        app.UseIpcBenchMetrics();
        MapServices(app);
        return app;
    }

    private static void MapServices(WebApplication app)
    {
        var control = app.Services.GetRequiredService<BenchControlService>();
        // Every control-plane call is a server span (Telemetry.Traced); the agent link's reports are not traced.
        // The control plane and reflection are served on the control port only, the agent link on the agents' private
        // socket only; health answers on both.
        app.MapGrpcLiteService(BenchControl.Descriptor, s => s
            .OnlyOnListeners(ControlPlaneSecurity.ControlListener)
            .TracedUnary<ListTransportsRequest, ListTransportsResponse>(nameof(control.ListTransports), control.ListTransports)
            .TracedUnary<StartScenarioRequest, StartScenarioResponse>(nameof(control.StartScenario), control.StartScenario)
            .TracedUnary<GetScenarioRequest, Scenario>(nameof(control.GetScenario), control.GetScenario)
            .TracedUnary<ListScenariosRequest, ListScenariosResponse>(nameof(control.ListScenarios), control.ListScenarios)
            .TracedUnary<StopScenarioRequest, Scenario>(nameof(control.StopScenario), control.StopScenario)
            .TracedServerStreaming<WatchScenarioRequest, Scenario>(nameof(control.WatchScenario), control.WatchScenario)
            .TracedUnary<ExportScenariosRequest, ExportScenariosResponse>(nameof(control.ExportScenarios), control.ExportScenarios)
            .TracedUnary<CompareScenariosRequest, CompareScenariosResponse>(nameof(control.CompareScenarios), control.CompareScenarios));

        var agents = app.Services.GetRequiredService<AgentLinkService>();
        app.MapGrpcLiteService(AgentLink.Descriptor, s => s
            .OnlyOnListeners(ControlPlaneSecurity.AgentListener)
            .ServerStreaming<AttachRequest, AgentCommand>(nameof(agents.Attach), agents.Attach)
            .Unary<AgentReport, ReportAck>(nameof(agents.Report), agents.Report));

        app.MapGrpcLiteReflection(ControlPlaneSecurity.ControlListener);
        app.MapGrpcLiteHealth();
        app.Services.GetRequiredService<GrpcLiteHealthService>()
            .SetStatus(BenchControl.Descriptor.FullName, IpcBench.GrpcLite.Health.V1.HealthCheckResponse.Types.ServingStatus.Serving);
    }
}

/// <summary>The generated code has no service stubs (GrpcServices="None"); these name the service descriptors.</summary>
internal static class BenchControl
{
    public static Google.Protobuf.Reflection.ServiceDescriptor Descriptor => ControlReflection.Descriptor.Services.Single(s => s.Name == "BenchControl");
}

internal static class AgentLink
{
    public static Google.Protobuf.Reflection.ServiceDescriptor Descriptor => AgentReflection.Descriptor.Services.Single(s => s.Name == "AgentLink");
}

/// <summary>Control-plane methods registered as server spans (<see cref="Telemetry.Traced{TRequest, TResponse}(string, string, Func{TRequest, GrpcCallContext, Task{TResponse}})"/>) of their service.</summary>
internal static class TracedServiceBuilderExtensions
{
    public static GrpcLiteServiceBuilder TracedUnary<TRequest, TResponse>(
        this GrpcLiteServiceBuilder builder, string method, Func<TRequest, GrpcCallContext, Task<TResponse>> handler)
        where TRequest : class, Google.Protobuf.IMessage<TRequest>, new()
        where TResponse : class, Google.Protobuf.IMessage<TResponse> =>
        builder.Unary(method, Telemetry.Traced(builder.Service.FullName, method, handler));

    public static GrpcLiteServiceBuilder TracedServerStreaming<TRequest, TResponse>(
        this GrpcLiteServiceBuilder builder, string method, Func<TRequest, IServerStreamWriter<TResponse>, GrpcCallContext, Task> handler)
        where TRequest : class, Google.Protobuf.IMessage<TRequest>, new()
        where TResponse : class, Google.Protobuf.IMessage<TResponse> =>
        builder.ServerStreaming(method, Telemetry.Traced(builder.Service.FullName, method, handler));
}
