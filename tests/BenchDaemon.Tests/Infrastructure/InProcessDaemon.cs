using Grpc.Health.V1;
using Grpc.Net.Client;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Observability;
using Prometheus;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.TestHost;
using Serilog;
using Serilog.Core;
using Serilog.Events;
using Microsoft.Extensions.DependencyInjection;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// The daemon's whole host (<see cref="DaemonHost"/>: options and their validation, the engine, the store, interceptors,
/// authorization, reflection, health) in the test process on ASP.NET Core's TestServer, called through Grpc.Net.Client:
/// for control-plane contracts (validation, status codes, paging, exports, comparisons), where a process adds nothing but
/// its start-up time. There is no Kestrel, so no agent socket: scenarios run on the in-process channels transport only;
/// anything with agents, signals, ports or grpcurl needs a <see cref="DaemonProcess"/>. Every request is served as if it
/// came in on the control listener. Logs go to <see cref="DaemonClient.Output"/>; runtime directory and database are
/// private and removed on dispose.
/// </summary>
internal sealed class InProcessDaemon : DaemonClient, IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly string _runtimeBase;
    private bool _disposed;

    private InProcessDaemon(WebApplication app, GrpcChannel channel, OutputLog output, string runtimeBase, string databasePath)
        : base(channel, output)
    {
        _app = app;
        _runtimeBase = runtimeBase;
        DatabasePath = databasePath;
    }

    /// <summary>IpcBench:DatabasePath, inside the private runtime directory unless the test passed its own.</summary>
    public string DatabasePath { get; }

    public IServiceProvider Services => _app.Services;

    /// <summary>A handler into the host for clients other than <see cref="DaemonClient.Channel"/> (raw HTTP/2 bodies, say).</summary>
    public HttpMessageHandler CreateHandler() => _app.GetTestServer().CreateHandler();

    /// <summary>
    /// What GET /metrics would answer (TestServer has no metrics port): the host's own registry in the same text format,
    /// so tests of what the daemon counts need no process. The port itself is tested on a <see cref="DaemonProcess"/>.
    /// </summary>
    public async Task<string> MetricsTextAsync()
    {
        using var text = new MemoryStream();
        await Services.GetRequiredService<DaemonMetrics>().Registry.CollectAndExportAsTextAsync(text);
        return System.Text.Encoding.UTF8.GetString(text.ToArray());
    }

    /// <summary>Agent processes this host started: it runs in the test process, so they would be its children.</summary>
    public IReadOnlyList<ProcessEntry> Agents() => [.. ProcessTree.Children(Environment.ProcessId).Where(p => p.IsAgent)];

    /// <summary>Starts a host with <paramref name="configuration"/> (e.g. "--IpcBench:MaxPublishers=8") and waits until it is ready.</summary>
    public static async Task<InProcessDaemon> StartAsync(params string[] configuration)
    {
        var runtimeBase = Path.Combine(Path.GetTempPath(), "ipcbench-tests", Guid.NewGuid().ToString("N")[..10]);
        Directory.CreateDirectory(runtimeBase);
        var databasePath = configuration.FirstOrDefault(c => c.StartsWith(DatabaseKey, StringComparison.Ordinal))?[DatabaseKey.Length..]
            ?? Path.Combine(runtimeBase, "scenarios.db");
        var output = new OutputLog();
        WebApplication? app = null;
        try
        {
            var builder = DaemonHost.CreateBuilder(
                [$"--IpcBench:RuntimeDirectory={runtimeBase}", $"{DatabaseKey}{databasePath}", .. configuration],
                options =>
                {
                    options.ControlAddress = string.Empty;
                    options.MetricsAddress = string.Empty;
                });
            builder.WebHost.UseTestServer();
            builder.Services.AddSingleton<IStartupFilter, ControlListenerFilter>();
            // Registered after the daemon's own: the last ILoggerFactory wins, so the daemon's console logger is never made.
            builder.Services.AddSerilog(
                (_, logger) => logger.MinimumLevel.Information().MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
                    .Enrich.FromLogContext().WriteTo.Sink(new OutputSink(output)),
                preserveStaticLogger: true);
            app = DaemonHost.Build(builder);
            await app.StartAsync();
            var channel = GrpcChannel.ForAddress(app.GetTestServer().BaseAddress, new GrpcChannelOptions
            {
                HttpHandler = app.GetTestServer().CreateHandler(),
                ThrowOperationCanceledOnCancellation = true,
            });
            var daemon = new InProcessDaemon(app, channel, output, runtimeBase, databasePath);
            await daemon.WaitUntilReadyAsync();
            return daemon;
        }
        catch
        {
            if (app is not null)
            {
                await app.DisposeAsync();
            }

            Directory.Delete(runtimeBase, recursive: true);
            throw;
        }
    }

    private const string DatabaseKey = "--IpcBench:DatabasePath=";

    /// <summary>Health turns SERVING once the store is open and every transport probed, as a process's start waits for.</summary>
    private async Task WaitUntilReadyAsync()
    {
        var health = new Health.HealthClient(Channel);
        for (var clock = System.Diagnostics.Stopwatch.StartNew(); ; await Task.Delay(20))
        {
            var status = (await health.CheckAsync(new HealthCheckRequest(), deadline: Deadline())).Status;
            if (status == HealthCheckResponse.Types.ServingStatus.Serving)
            {
                return;
            }

            if (clock.Elapsed > TimeSpan.FromSeconds(30))
            {
                throw new TimeoutException($"The in-process daemon was not ready within 30 s (health {status}).\n{Output.Describe()}");
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        Channel.Dispose();
        try
        {
            await _app.StopAsync(CancellationToken.None);
        }
        finally
        {
            await _app.DisposeAsync();
            Directory.Delete(_runtimeBase, recursive: true);
        }
    }

    /// <summary>TestServer has no listeners to tag connections: every request counts as the control listener's.</summary>
    private sealed class ControlListenerFilter : IStartupFilter
    {
        private static readonly ListenerFeature Control = new(ControlPlaneSecurity.ControlListener);

        public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
        {
            app.Use((context, nextMiddleware) =>
            {
                context.Features.Set(Control);
                return nextMiddleware(context);
            });
            next(app);
        };
    }

    private sealed class OutputSink(OutputLog output) : ILogEventSink
    {
        public void Emit(LogEvent logEvent) => output.Add(
            $"{logEvent.Level} {logEvent.RenderMessage(System.Globalization.CultureInfo.InvariantCulture)}{(logEvent.Exception is null ? string.Empty : " " + logEvent.Exception)}",
            "log");
    }
}

/// <summary>
/// One in-process daemon for the contract tests of a class that leave it as they found it, with
/// <see cref="SharedDaemon"/>'s limits, so the same refusals hold for both.
/// </summary>
public sealed class SharedInProcessDaemon : IAsyncLifetime
{
    private InProcessDaemon? _daemon;

    internal InProcessDaemon Daemon => _daemon ?? throw new InvalidOperationException("The in-process daemon is not running.");

    public async Task InitializeAsync() => _daemon = await InProcessDaemon.StartAsync(SharedDaemon.Limits);

    public async Task DisposeAsync()
    {
        if (_daemon is not null)
        {
            await _daemon.DisposeAsync();
        }
    }
}
