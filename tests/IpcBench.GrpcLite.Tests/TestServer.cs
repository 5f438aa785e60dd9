using System.Collections.Concurrent;
using IpcBench.GrpcLite.Tests.V1;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace IpcBench.GrpcLite.Tests;

/// <summary>A real Kestrel server hosting the test service, reflection and health on loopback TCP and a unix socket.</summary>
public sealed class TestServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly ConcurrentDictionary<string, TaskCompletionSource> _cancelled = new();
    private bool _stopped;

    private TestServer(WebApplication app, string socketPath, CapturingLoggerProvider logs)
    {
        _app = app;
        SocketPath = socketPath;
        Logs = logs;
    }

    /// <summary>host:port, the form grpcurl takes.</summary>
    public string HostPort { get; private set; } = "";

    /// <summary>http://host:port, or https:// when the server was started with a certificate.</summary>
    public string TcpAddress { get; private set; } = "";

    public string SocketPath { get; }

    public string UnixAddress => $"unix:{SocketPath}";

    public CapturingLoggerProvider Logs { get; }

    public GrpcLiteHealthService Health => _app.Services.GetRequiredService<GrpcLiteHealthService>();

    public string Address(string transport) => transport switch
    {
        "tcp" => TcpAddress,
        "unix" => UnixAddress,
        _ => throw new ArgumentOutOfRangeException(nameof(transport), transport, null),
    };

    /// <summary>Completes when a handler saw its call's cancellation token fire for <paramref name="tag"/>.</summary>
    public Task CancellationObserved(string tag) => CancelledSource(tag).Task;

    public static async Task<TestServer> StartAsync(Action<GrpcLiteServerOptions>? configure = null, TestServerSetup? setup = null)
    {
        setup ??= new TestServerSetup();
        var socketPath = Path.Combine(Path.GetTempPath(), $"grpclite-{Guid.NewGuid():N}.sock");
        var logs = new CapturingLoggerProvider();
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.Logging.AddProvider(logs);
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.Logging.AddFilter("IpcBench.GrpcLite", LogLevel.Debug);
        builder.Services.AddGrpcLite(configure);
        setup.Services?.Invoke(builder.Services);
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(5));
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.ListenGrpcLite("http://127.0.0.1:0", l => (l.Name, l.Certificate) = ("tcp", setup.Certificate));
            kestrel.ListenGrpcLite($"unix:{socketPath}", l => l.Name = "unix");
        });

        var app = builder.Build();
        var server = new TestServer(app, socketPath, logs);
        app.MapGrpcLiteService(TestReflection.Descriptor.Services[0], svc => svc
            .OnlyOnListeners(setup.TestServiceListeners)
            .Unary<EchoRequest, EchoResponse>("Echo", server.EchoAsync)
            .ServerStreaming<CountRequest, CountResponse>("Count", server.CountAsync)
            .Unary<ValidateRequest, ValidateResponse>("Validate", (req, _) => Task.FromResult(Validate(req)))
            .Unary<ValidateRequest, ValidateResponse>("Crash", (_, _) => throw new InvalidOperationException("kaboom")));
        app.MapGrpcLiteReflection();
        app.MapGrpcLiteHealth();

        await app.StartAsync();
        var addresses = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses;
        var scheme = setup.Certificate is null ? "http://" : "https://";
        server.HostPort = addresses.Single(a => a.StartsWith(scheme + "127.0.0.1:", StringComparison.Ordinal))[scheme.Length..];
        server.TcpAddress = scheme + server.HostPort;
        return server;
    }

    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        _stopped = true;
        await _app.StopAsync(cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        if (!_stopped)
        {
            await StopAsync();
        }

        await _app.DisposeAsync();
        File.Delete(SocketPath);
    }

    private static ValidateResponse Validate(ValidateRequest request) => request.X switch
    {
        < 0 => throw new RpcException(StatusCode.InvalidArgument, "x is négative: 100% wrong\nreally"),
        < 1 or > 5 => throw new RpcException(StatusCode.InvalidArgument, "field x must be 1..5"),
        _ => new ValidateResponse { X = request.X },
    };

    private TaskCompletionSource CancelledSource(string tag) =>
        _cancelled.GetOrAdd(tag, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));

    private async Task<EchoResponse> EchoAsync(EchoRequest request, GrpcCallContext context)
    {
        if (request.Delay is { } delay)
        {
            try
            {
                await Task.Delay(delay.ToTimeSpan(), context.CancellationToken);
            }
            catch (OperationCanceledException)
            {
                CancelledSource(request.Text).TrySetResult();
                throw;
            }
        }

        return new EchoResponse
        {
            Text = request.Text,
            Delay = request.Delay,
            PayloadLength = request.Payload.Length,
            Mood = request.Mood,
            Authorization = context.GetHeader("authorization") ?? "",
            Peer = context.Peer,
        };
    }

    private async Task CountAsync(CountRequest request, IServerStreamWriter<CountResponse> writer, GrpcCallContext context)
    {
        try
        {
            for (var i = 1; i <= request.Count; i++)
            {
                if (request.FailAfter > 0 && i > request.FailAfter)
                {
                    throw new RpcException(StatusCode.Aborted, $"failed after {request.FailAfter}");
                }

                if (request.AbortAfter > 0 && i > request.AbortAfter)
                {
                    context.HttpContext.Abort();
                    return;
                }

                await writer.WriteAsync(new CountResponse { Value = i }, context.CancellationToken);
                if (request.IgnoreCancellation)
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), CancellationToken.None);
                    return;
                }

                if (request.Interval is { } interval && i < request.Count)
                {
                    await Task.Delay(interval.ToTimeSpan(), context.CancellationToken);
                }
            }
        }
        catch (OperationCanceledException) when (context.CancellationToken.IsCancellationRequested)
        {
            CancelledSource(request.Tag).TrySetResult();
            throw;
        }
    }
}

/// <summary>
/// Variations of <see cref="TestServer"/>: its TCP listener is named "tcp" (TLS with <see cref="Certificate"/>), its unix
/// socket listener "unix".
/// </summary>
public sealed class TestServerSetup
{
    /// <summary>More services, e.g. call filters.</summary>
    public Action<Microsoft.Extensions.DependencyInjection.IServiceCollection>? Services { get; init; }

    public System.Security.Cryptography.X509Certificates.X509Certificate2? Certificate { get; init; }

    /// <summary>Listeners the test service is confined to; empty: every listener.</summary>
    public string[] TestServiceListeners { get; init; } = [];
}

/// <summary>One server per test class; tests use unique tags so they never observe each other.</summary>
public sealed class TestServerFixture : IAsyncLifetime
{
    public TestServer Server { get; private set; } = null!;

    public async Task InitializeAsync() => Server = await TestServer.StartAsync();

    public async Task DisposeAsync() => await Server.DisposeAsync();
}

public sealed class CapturingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<(string Category, LogLevel Level, string Message, Exception? Exception)> _entries = new();

    public IReadOnlyCollection<(string Category, LogLevel Level, string Message, Exception? Exception)> Entries => _entries;

    public ILogger CreateLogger(string categoryName) => new Logger(categoryName, _entries);

    public void Dispose()
    {
    }

    private sealed class Logger(string category, ConcurrentQueue<(string, LogLevel, string, Exception?)> entries) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            entries.Enqueue((category, logLevel, formatter(state, exception), exception));
    }
}
