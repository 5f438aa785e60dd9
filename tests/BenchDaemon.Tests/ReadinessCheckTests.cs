using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Persistence;
using IpcBench.Transports;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// What grpc.health.v1 reports comes from this check (unhealthy is NOT_SERVING; healthy and degraded are SERVING): ready
/// once the scenario store was opened, or found unusable, and the transports were probed; not while stopping.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ReadinessCheckTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-readiness-").FullName;
    private readonly StoppableLifetime _lifetime = new();

    public void Dispose()
    {
        _lifetime.Dispose();
        Directory.Delete(_directory, recursive: true);
    }

    [Fact]
    public async Task BeforeTheStoreIsOpened_IsUnhealthy_ThenHealthy_ThenUnhealthyOnceStopping()
    {
        var writer = NewWriter(Path.Combine(_directory, "scenarios.db"));
        var check = new ReadinessCheck(writer, TransportRegistry.CreateDefault(), _lifetime);

        var before = await CheckAsync(check);
        Assert.Equal(HealthStatus.Unhealthy, before.Status);
        Assert.Contains("database", before.Description, StringComparison.Ordinal);

        await writer.StartAsync(CancellationToken.None);
        try
        {
            Assert.Equal(HealthStatus.Healthy, (await CheckAsync(check)).Status);

            _lifetime.Stop();
            var stopping = await CheckAsync(check);
            Assert.Equal(HealthStatus.Unhealthy, stopping.Status);
            Assert.Contains("shutting down", stopping.Description, StringComparison.Ordinal);
        }
        finally
        {
            await writer.StopAsync(CancellationToken.None);
        }
    }

    [Fact]
    public async Task AStoreThatCannotBeOpened_IsDegraded_SoTheDaemonStillServes()
    {
        var blocker = Path.Combine(_directory, "not-a-directory");
        await File.WriteAllTextAsync(blocker, "x");
        var writer = NewWriter(Path.Combine(blocker, "scenarios.db"));
        await writer.StartAsync(CancellationToken.None);
        try
        {
            var result = await CheckAsync(new ReadinessCheck(writer, TransportRegistry.CreateDefault(), _lifetime));

            Assert.Equal(HealthStatus.Degraded, result.Status);
            Assert.Contains("cannot be opened", result.Description, StringComparison.Ordinal);
        }
        finally
        {
            await writer.StopAsync(CancellationToken.None);
        }
    }

    [Fact]
    public async Task ProbesEveryTransport_ReportingTheUnavailableOnes()
    {
        var writer = NewWriter(Path.Combine(_directory, "scenarios.db"));
        await writer.StartAsync(CancellationToken.None);
        try
        {
            var transports = TransportRegistry.CreateDefault();
            var result = await CheckAsync(new ReadinessCheck(writer, transports, _lifetime));

            var unavailable = transports.All.Where(t => t.UnavailableReason is not null).ToDictionary(t => t.Id, t => (object)t.UnavailableReason!);
            Assert.Equal(unavailable, result.Data);
        }
        finally
        {
            await writer.StopAsync(CancellationToken.None);
        }
    }

    private static Task<HealthCheckResult> CheckAsync(ReadinessCheck check) =>
        check.CheckHealthAsync(new HealthCheckContext { Registration = new HealthCheckRegistration(ReadinessCheck.Name, check, null, null) });

    private static StoreWriter NewWriter(string path) =>
        new(Options.Create(new DaemonOptions { DatabasePath = path }), NullLogger<StoreWriter>.Instance);

    private sealed class StoppableLifetime : IHostApplicationLifetime, IDisposable
    {
        private readonly CancellationTokenSource _stopping = new();

        public CancellationToken ApplicationStarted => CancellationToken.None;

        public CancellationToken ApplicationStopping => _stopping.Token;

        public CancellationToken ApplicationStopped => CancellationToken.None;

        public void StopApplication() => Stop();

        public void Stop() => _stopping.Cancel();

        public void Dispose() => _stopping.Dispose();
    }
}
