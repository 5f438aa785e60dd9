using System.IO.Compression;
using Grpc.Net.Compression;
using Grpc.Reflection;
using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;
using IpcBench.Reports;
using IpcBench.Transports;
using IpcBench.V1;
using Microsoft.Extensions.Options;
using ProtoServiceDescriptor = Google.Protobuf.Reflection.ServiceDescriptor;

namespace IpcBench.Daemon.Hosting;

/// <summary>Everything the daemon wires up, in one place: options, transports, the engine, gRPC endpoints and observability.</summary>
public static class DaemonHost
{
    public static WebApplication Build(string[] configurationArguments, Action<DaemonOptions>? overrides = null) =>
        Build(CreateBuilder(configurationArguments, overrides));

    /// <summary>
    /// The daemon's services and listeners, not yet built: what <see cref="Build(WebApplicationBuilder)"/> turns into the
    /// app. Separate so a host can swap the server before building (in-process contract tests use ASP.NET Core's TestServer).
    /// </summary>
    public static WebApplicationBuilder CreateBuilder(string[] configurationArguments, Action<DaemonOptions>? overrides = null)
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
        builder.Services.AddSingleton<IValidateOptions<DaemonOptions>, TransportSettingsValidator>();
        builder.Services.AddSingleton<ControlPlaneSecurity>();
        // SIGTERM's stops and final writes take a second or two, but longer on a busy machine: with 5 s, a daemon stopping
        // five scenarios beside a loaded CI run gave up, cut its WatchScenario streams before their final snapshots and
        // lost a result's write (2026-11-29). 12 s still ends within the grace periods of deploy/ (compose and k8s 15 s,
        // systemd 20 s) before their SIGKILL.
        builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = TimeSpan.FromSeconds(12));
        builder.Services.AddSingleton(services => TransportRegistry.CreateDefault(services.GetRequiredService<IOptions<DaemonOptions>>().Value.TransportSettings()));
        builder.Services.AddSingleton<RuntimeDirectory>();
        builder.Services.AddSingleton<AgentDirectory>();
        builder.Services.AddSingleton<AgentLauncher>();
        builder.Services.AddSingleton<AgentPool>();
        builder.Services.AddSingleton<SpecValidator>();
        builder.Services.AddSingleton<AdmissionControl>();
        // Before ScenarioManager: hosted services stop in reverse order, so the writer flushes after scenarios have ended.
        builder.Services.AddSingleton<StoreWriter>();
        builder.Services.AddSingleton<IScenarioRecorder, StoreRecorder>();
        builder.Services.AddSingleton<IProbeHistory, StoredProbeHistory>();
        builder.Services.AddHostedService(services => services.GetRequiredService<StoreWriter>());
        builder.Services.AddSingleton<ScenarioManager>();
        builder.Services.AddHostedService(services => services.GetRequiredService<ScenarioManager>());
        builder.Services.AddSingleton<ScenarioCatalog>();
        builder.Services.AddSingleton<ISuiteArchive, StoredSuiteArchive>();
        builder.Services.AddSingleton<SuiteManager>();
        builder.Services.AddSingleton(services => new PresetCatalog(services.GetRequiredService<TransportRegistry>().All.Select(t => t.Id)));
        builder.Services.AddSingleton<SuitePlanner>();
        builder.Services.AddSingleton<SuiteReports>();
        builder.Services.AddSingleton<SuiteControl>();
        AddControlPlane(builder.Services);

        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            var daemon = kestrel.ApplicationServices.GetRequiredService<IOptions<DaemonOptions>>().Value;
            var runtime = kestrel.ApplicationServices.GetRequiredService<RuntimeDirectory>();
            var security = kestrel.ApplicationServices.GetRequiredService<ControlPlaneSecurity>();
            if (!string.IsNullOrWhiteSpace(daemon.ControlAddress))
            {
                kestrel.ListenGrpc(daemon.ControlAddress, ControlPlaneSecurity.ControlListener, security.Certificate);
            }

            if (!string.IsNullOrWhiteSpace(daemon.MetricsAddress))
            {
                kestrel.ListenMetrics(daemon.MetricsAddress, daemon.ControlAddress);
            }

            kestrel.ListenGrpc("unix:" + runtime.AgentSocketPath, ControlPlaneSecurity.AgentListener);
        });
        return builder;
    }

    /// <summary>Builds the app from <see cref="CreateBuilder"/>'s builder and maps its middleware and services.</summary>
    public static WebApplication Build(WebApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var app = builder.Build();
        // Kestrel creates the socket with the process umask; only the daemon's user (its agents) may connect. The 0700
        // directory already keeps others out; this keeps the socket private even if the directory were ever opened up.
        // A host on another server (the in-process contract tests' TestServer) has no agent socket, and nothing to restrict.
        app.Lifetime.ApplicationStarted.Register(() =>
        {
            var runtime = app.Services.GetRequiredService<RuntimeDirectory>();
            if (File.Exists(runtime.AgentSocketPath))
            {
                runtime.RestrictAgentSocket();
            }
        });
        app.UseIpcBenchMetrics();
        app.UseRouting();
        app.UseAuthentication();
        app.UseAuthorization();
        app.UseListenerConfinement();
        app.UseRequestMessageGuard();
        MapServices(app);
        return app;
    }

    /// <summary>grpc-dotnet with the daemon's two services, reflection, health, the control token and the status mapping.</summary>
    private static void AddControlPlane(IServiceCollection services)
    {
        services.AddGrpc(grpc =>
        {
            grpc.Interceptors.Add<RefusalInterceptor>();
            // Compressed requests are accepted; responses stay uncompressed unless a client asks (no ResponseCompressionAlgorithm).
            grpc.CompressionProviders = [new GzipCompressionProvider(CompressionLevel.Fastest), new DeflateCompressionProvider(CompressionLevel.Fastest)];
        });
        services.AddSingleton<BenchControlService>();
        services.AddSingleton<AgentLinkService>();

        // Reflection describes what the control port serves, not the agents' private link; registered before
        // AddGrpcReflection, whose own registrations (every mapped service) then stand aside. Made on the first reflection
        // call (grpcurl's), not at startup: the descriptors' reflection tables are most of what Google.Protobuf compiles.
        static ProtoServiceDescriptor[] Described() =>
        [
            BenchControl.Descriptor,
            Grpc.Health.V1.Health.Descriptor,
            Grpc.Reflection.V1.ServerReflection.Descriptor,
            Grpc.Reflection.V1Alpha.ServerReflection.Descriptor,
        ];
        services.AddSingleton<ReflectionServiceImpl>(_ => new ClientGoneReflectionV1Alpha(Described()));
        services.AddSingleton<ReflectionV1ServiceImpl>(_ => new ClientGoneReflectionV1(Described()));
        services.AddGrpcReflection();

        services.AddGrpcHealthChecks(health =>
        {
            health.Services.Clear();
            health.Services.Map("", _ => true);
            health.Services.Map(ControlPlaneServices.BenchControl, _ => true);
        }).AddCheck<ReadinessCheck>(ReadinessCheck.Name);

        services.AddControlTokenAuthorization();
    }

    private static void MapServices(WebApplication app)
    {
        // BenchControl and reflection on the control port only, the agent link on the agents' private socket only; health
        // on both, and without the token. The control token's policy is the fallback policy, so it covers the rest.
        app.MapGrpcService<BenchControlService>().OnlyOnListener(ControlPlaneSecurity.ControlListener).RequireAuthorization(ControlTokenRequirement.PolicyName);
        app.MapGrpcReflectionService().OnlyOnListener(ControlPlaneSecurity.ControlListener).RequireAuthorization(ControlTokenRequirement.PolicyName);
        app.MapGrpcService<AgentLinkService>().OnlyOnListener(ControlPlaneSecurity.AgentListener);
        app.MapGrpcHealthChecksService().AllowAnonymous();
    }

    /// <summary>Whether building or starting the host failed on its configuration (exit code 2), not on a fault.</summary>
    public static bool IsConfigurationError(Exception e) =>
        e is OptionsValidationException or ArgumentException or IOException
        || e.InnerException is System.Net.Sockets.SocketException;
}
