using IpcBench.Daemon.Scenarios;
using IpcBench.GrpcLite;
using IpcBench.Transports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>The ipcbench.v1.BenchControl RPCs users call with grpcurl.</summary>
public sealed class BenchControlService(ScenarioManager scenarios, TransportRegistry transports, Agents.AgentLauncher launcher)
{
    private static readonly TimeSpan WatchInterval = TimeSpan.FromSeconds(1);

    public Task<ListTransportsResponse> ListTransports(ListTransportsRequest request, GrpcCallContext context)
    {
        var response = new ListTransportsResponse();
        foreach (var transport in transports.All)
        {
            var capabilities = transport.Capabilities;
            var unavailable = transport.UnavailableReason
                ?? (capabilities.CrossProcess ? launcher.UnavailableReason : null);
            var info = new TransportInfo
            {
                Id = transport.Id,
                Description = transport.Description,
                CrossProcess = capabilities.CrossProcess,
                ZeroCopy = capabilities.ZeroCopy,
                Available = unavailable is null,
                UnavailableReason = unavailable ?? string.Empty,
                SupportsRoundTrip = capabilities.SupportsRoundTrip,
                DefaultWaitStrategy = WaitStrategies.ToProto(capabilities.DefaultWaitMode),
                MaxPayloadBytes = capabilities.MaxPayloadBytes,
                HeaderBytes = MessageHeader.Size,
            };
            info.WaitStrategies.AddRange(capabilities.WaitModes.Select(WaitStrategies.ToProto));
            response.Transports.Add(info);
        }

        return Task.FromResult(response);
    }

    public Task<StartScenarioResponse> StartScenario(StartScenarioRequest request, GrpcCallContext context)
    {
        var run = scenarios.Start(request.Spec);
        return Task.FromResult(new StartScenarioResponse { Id = run.Id, Scenario = run.Snapshot() });
    }

    public Task<Scenario> GetScenario(GetScenarioRequest request, GrpcCallContext context) =>
        Task.FromResult(scenarios.Get(request.Id).Snapshot());

    public Task<ListScenariosResponse> ListScenarios(ListScenariosRequest request, GrpcCallContext context)
    {
        var response = new ListScenariosResponse();
        response.Scenarios.AddRange(scenarios.List().Select(s => s.Snapshot()));
        return Task.FromResult(response);
    }

    public async Task<Scenario> StopScenario(StopScenarioRequest request, GrpcCallContext context)
    {
        var run = scenarios.Get(request.Id);
        run.RequestStop();
        // Answer with the result, not a half-stopped snapshot: stopping takes a drain, which is short.
        await Task.WhenAny(run.Completion, Task.Delay(TimeSpan.FromSeconds(30), context.CancellationToken)).ConfigureAwait(false);
        return run.Snapshot();
    }

    public async Task WatchScenario(WatchScenarioRequest request, IServerStreamWriter<Scenario> writer, GrpcCallContext context)
    {
        var run = scenarios.Get(request.Id);
        var cancellationToken = context.CancellationToken;
        while (true)
        {
            // Decide on the snapshot sent, not on Completion: a scenario is in its final state a moment before it has
            // released its agents, and a tick in between must not send the final snapshot twice.
            var snapshot = run.Snapshot();
            await writer.WriteAsync(snapshot, cancellationToken).ConfigureAwait(false);
            if (snapshot.State is ScenarioState.Completed or ScenarioState.Stopped or ScenarioState.Failed)
            {
                return;
            }

            await Task.WhenAny(run.Completion, Task.Delay(WatchInterval, cancellationToken)).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
        }
    }
}
