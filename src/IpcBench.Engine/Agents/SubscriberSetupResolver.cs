using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Agents;

/// <summary>
/// Resolves a subscriber's whole set-up once, here in the daemon, in the agents' wire format (agent.proto, whose
/// enums control.proto declares): what an agent is sent and what an in-process subscriber is built from (<see cref="SubscriberHost.Connect(ITransport, SubscriberSetup, CancellationToken)"/>).
/// </summary>
public static class SubscriberSetupResolver
{
    public static SubscriberSetup Resolve(ResolvedSpec spec, TransportEnvironment environment, DaemonOptions options,
        string scenarioKey, int subscriber, IEnumerable<PublisherAddress> publishers)
    {
        ArgumentNullException.ThrowIfNull(spec);
        ArgumentNullException.ThrowIfNull(environment);
        ArgumentNullException.ThrowIfNull(options);
        var transportId = spec.Transport.Id;
        var setup = new SubscriberSetup
        {
            Transport = transportId,
            ScenarioKey = scenarioKey,
            SubscriberIndex = subscriber,
            TotalPublishers = spec.Publishers,
            TotalSubscribers = spec.Subscribers,
            MessageBytes = spec.MaxMessageBytes,
            PayloadBytes = spec.PayloadBytes,
            WaitStrategy = WaitStrategies.ToProto(spec.WaitMode),
            Mode = spec.Mode == RunMode.RoundTrip ? Mode.RoundTrip : Mode.Stream,
            PayloadAccess = spec.FullPayload ? PayloadAccess.Full : PayloadAccess.HeaderOnly,
            RuntimeDirectory = environment.RuntimeDirectory,
            OwnerPid = environment.OwnerPid,
            SharedMemoryDirectory = options.SharedMemoryDirectory,
            Cpus = spec.Placement.SubscriberCpuList(subscriber),
            RealtimePriority = spec.Placement.RealtimePriority,
            LockMemory = spec.Placement.LockMemory,
        };
        setup.Publishers.AddRange(publishers.Select(p => new PublisherEndpoint { PublisherIndex = p.PublisherIndex, Address = p.Address }));
        foreach (var (name, value) in options.TransportSettings().SectionOf(transportId))
        {
            setup.TransportSettings[name] = value ?? string.Empty;
        }

        return setup;
    }
}
