using IpcBench.GrpcLite.Health.V1;
using ServingStatus = IpcBench.GrpcLite.Health.V1.HealthCheckResponse.Types.ServingStatus;

namespace IpcBench.GrpcLite;

/// <summary>
/// The statuses grpc.health.v1.Health reports. The server as a whole ("") starts SERVING; other services are
/// unknown (NOT_FOUND from Check) until a status is set for them.
/// </summary>
public sealed class GrpcLiteHealthService
{
    private readonly Lock _gate = new();
    private readonly Dictionary<string, ServingStatus> _statuses = new(StringComparer.Ordinal) { [""] = ServingStatus.Serving };

    // Replaced on every change; Watch calls wait on it instead of polling.
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <param name="service">A fully-qualified service name, or "" for the server as a whole.</param>
    public void SetStatus(string service, ServingStatus status)
    {
        ArgumentNullException.ThrowIfNull(service);
        lock (_gate)
        {
            _statuses[service] = status;
            SignalChange();
        }
    }

    public void ClearStatus(string service)
    {
        lock (_gate)
        {
            if (_statuses.Remove(service))
            {
                SignalChange();
            }
        }
    }

    public ServingStatus? GetStatus(string service)
    {
        lock (_gate)
        {
            return _statuses.TryGetValue(service, out var status) ? status : null;
        }
    }

    /// <summary>What a server that is going away reports, so load balancers and watchers stop sending it work.</summary>
    public void SetAllNotServing()
    {
        lock (_gate)
        {
            foreach (var service in _statuses.Keys.ToArray())
            {
                _statuses[service] = ServingStatus.NotServing;
            }

            SignalChange();
        }
    }

    internal Task<HealthCheckResponse> CheckAsync(HealthCheckRequest request, GrpcCallContext context) =>
        GetStatus(request.Service) is { } status
            ? Task.FromResult(new HealthCheckResponse { Status = status })
            : throw new RpcException(StatusCode.NotFound, $"Unknown service '{request.Service}'.");

    internal async Task WatchAsync(HealthCheckRequest request, IServerStreamWriter<HealthCheckResponse> writer, GrpcCallContext context)
    {
        ServingStatus? sent = null;
        while (true)
        {
            ServingStatus current;
            Task changed;
            lock (_gate)
            {
                current = _statuses.TryGetValue(request.Service, out var status) ? status : ServingStatus.ServiceUnknown;
                changed = _changed.Task;
            }

            if (current != sent)
            {
                await writer.WriteAsync(new HealthCheckResponse { Status = current }, context.CancellationToken);
                sent = current;
            }

            await changed.WaitAsync(context.CancellationToken);
        }
    }

    private void SignalChange()
    {
        var changed = _changed;
        _changed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        changed.SetResult();
    }
}
