using IpcBench.Daemon.Persistence;
using IpcBench.Transports;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace IpcBench.Daemon.Hosting;

/// <summary>
/// What grpc.health.v1 reports, for "" and ipcbench.v1.BenchControl alike: SERVING once the scenario store has been
/// opened (or found unusable) and every transport has been probed; NOT_SERVING before that and from the moment the
/// daemon starts stopping, so load balancers and watchers stop sending it work.
/// </summary>
public sealed class ReadinessCheck(StoreWriter store, TransportRegistry transports, IHostApplicationLifetime lifetime) : IHealthCheck
{
    public const string Name = "ready";

    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        if (lifetime.ApplicationStopping.IsCancellationRequested)
        {
            return Task.FromResult(HealthCheckResult.Unhealthy("the daemon is shutting down"));
        }

        if (store.Store is null && store.UnavailableReason is null)
        {
            return Task.FromResult(HealthCheckResult.Unhealthy("the scenario database is being opened"));
        }

        // Probing is what a transport's UnavailableReason does on first use (loading iceoryx2's native library, say); an
        // unavailable transport is a fact about this machine, reported by ListTransports, not a reason to refuse work.
        var unavailable = transports.All
            .Select(t => (t.Id, Reason: t.UnavailableReason))
            .Where(t => t.Reason is not null)
            .ToDictionary(t => t.Id, t => (object)t.Reason!);

        // Scenarios still run without a database (their results just do not survive a restart): degraded, still serving.
        return Task.FromResult(store.UnavailableReason is { } reason
            ? HealthCheckResult.Degraded(reason, data: unavailable)
            : HealthCheckResult.Healthy("ready", unavailable));
    }
}
