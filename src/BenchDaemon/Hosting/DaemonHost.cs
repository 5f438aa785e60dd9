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
        var service = BenchControl.Descriptor.FullName;
        app.MapGrpcLiteService(BenchControl.Descriptor, s => s
            .OnlyOnListeners(ControlPlaneSecurity.ControlListener)
            .Unary<ListTransportsRequest, ListTransportsResponse>(nameof(control.ListTransports),
                Telemetry.Traced<ListTransportsRequest, ListTransportsResponse>(service, nameof(control.ListTransports), control.ListTransports))
            .Unary<StartScenarioRequest, StartScenarioResponse>(nameof(control.StartScenario),
                Telemetry.Traced<StartScenarioRequest, StartScenarioResponse>(service, nameof(control.StartScenario), control.StartScenario))
            .Unary<GetScenarioRequest, Scenario>(nameof(control.GetScenario),
                Telemetry.Traced<GetScenarioRequest, Scenario>(service, nameof(control.GetScenario), control.GetScenario))
            .Unary<ListScenariosRequest, ListScenariosResponse>(nameof(control.ListScenarios),
                Telemetry.Traced<ListScenariosRequest, ListScenariosResponse>(service, nameof(control.ListScenarios), control.ListScenarios))
            .Unary<StopScenarioRequest, Scenario>(nameof(control.StopScenario),
                Telemetry.Traced<StopScenarioRequest, Scenario>(service, nameof(control.StopScenario), control.StopScenario))
            .ServerStreaming<WatchScenarioRequest, Scenario>(nameof(control.WatchScenario),
                Telemetry.Traced<WatchScenarioRequest, Scenario>(service, nameof(control.WatchScenario), control.WatchScenario))
            .Unary<ExportScenariosRequest, ExportScenariosResponse>(nameof(control.ExportScenarios),
                Telemetry.Traced<ExportScenariosRequest, ExportScenariosResponse>(service, nameof(control.ExportScenarios), control.ExportScenarios))
            .Unary<CompareScenariosRequest, CompareScenariosResponse>(nameof(control.CompareScenarios),
                Telemetry.Traced<CompareScenariosRequest, CompareScenariosResponse>(service, nameof(control.CompareScenarios), control.CompareScenarios)));

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
