using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;
using IpcBench.Workload.Placement;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Control;

/// <summary>
/// Checks a user's spec and resolves its defaults. Every refusal is INVALID_ARGUMENT naming the field (as users type
/// it into grpcurl) and what is allowed; placement the machine does not permit is FAILED_PRECONDITION (PlacementValidator).
/// </summary>
/// <param name="placementLimits">What this process may ask of the scheduler; null reads this process's (tests pass others).</param>
public sealed class SpecValidator(TransportRegistry transports, IOptions<DaemonOptions> options, Func<PlacementLimits>? placementLimits = null)
{
    private readonly PlacementValidator _placement = new(placementLimits ?? PlacementLimits.OfThisProcess);

    private static readonly TimeSpan MaxDuration = TimeSpan.FromDays(365);

    public ResolvedSpec Resolve(ScenarioSpec? spec)
    {
        if (spec is null)
        {
            throw Invalid("spec", "is required");
        }

        var limits = options.Value;
        var known = string.Join(", ", transports.All.Select(t => t.Id));
        if (string.IsNullOrWhiteSpace(spec.Transport))
        {
            throw Invalid("spec.transport", $"is required; one of: {known}");
        }

        var transport = transports.Find(spec.Transport)
            ?? throw Invalid("spec.transport", $"'{Quote(spec.Transport)}' is not a transport; one of: {known}");
        if (transport.UnavailableReason is { } reason)
        {
            throw new RequestRefusedException(RefusalKind.FailedPrecondition, "spec.transport", $"'{transport.Id}' is not available on this machine: {reason}");
        }

        var capabilities = transport.Capabilities;
        RequireRange("spec.publishers", spec.Publishers, 1, limits.MaxPublishers);
        RequireRange("spec.subscribers", spec.Subscribers, 1, limits.MaxSubscribers);
        int maxPayload = Math.Min(limits.MaxPayloadBytes, capabilities.MaxPayloadBytes);
        RequireRange("spec.payload_bytes", spec.PayloadBytes, 1, maxPayload);

        var duration = ReadDuration("spec.duration", spec.Duration, allowZero: false);
        var warmup = ReadDuration("spec.warmup", spec.Warmup, allowZero: true) ?? TimeSpan.Zero;

        if (!OfferedRate.InRange(spec.RatePerPublisher))
        {
            throw Invalid("spec.rate_per_publisher", $"must be {OfferedRate.Allowed}; got {spec.RatePerPublisher}");
        }

        var topology = spec.Topology switch
        {
            Topology.Unspecified or Topology.AllToAll => Topology.AllToAll,
            Topology.Paired => Topology.Paired,
            _ => throw Invalid("spec.topology", $"unknown value {(int)spec.Topology}; allowed: TOPOLOGY_ALL_TO_ALL, TOPOLOGY_PAIRED"),
        };
        if (topology == Topology.Paired && spec.Publishers != spec.Subscribers)
        {
            throw Invalid("spec.topology", $"TOPOLOGY_PAIRED needs publishers == subscribers; got {spec.Publishers} publishers and {spec.Subscribers} subscribers");
        }

        var access = spec.PayloadAccess switch
        {
            PayloadAccess.Unspecified or PayloadAccess.Full => PayloadAccess.Full,
            PayloadAccess.HeaderOnly => PayloadAccess.HeaderOnly,
            _ => throw Invalid("spec.payload_access", $"unknown value {(int)spec.PayloadAccess}; allowed: PAYLOAD_ACCESS_FULL, PAYLOAD_ACCESS_HEADER_ONLY"),
        };

        var mode = spec.Mode switch
        {
            Mode.Unspecified or Mode.Stream => Mode.Stream,
            Mode.RoundTrip => Mode.RoundTrip,
            _ => throw Invalid("spec.mode", $"unknown value {(int)spec.Mode}; allowed: MODE_STREAM, MODE_ROUND_TRIP"),
        };
        if (mode == Mode.RoundTrip && !capabilities.SupportsRoundTrip)
        {
            throw Invalid("spec.mode", $"transport '{transport.Id}' does not support MODE_ROUND_TRIP; allowed: MODE_STREAM");
        }

        var allowedWaits = string.Join(", ", capabilities.WaitModes.Select(m => WaitStrategyName(WaitStrategies.ToProto(m))));
        WaitMode waitMode;
        if (spec.WaitStrategy == WaitStrategy.Unspecified)
        {
            waitMode = capabilities.DefaultWaitMode;
        }
        else
        {
            waitMode = WaitStrategies.FromProto(spec.WaitStrategy)
                ?? throw Invalid("spec.wait_strategy", $"unknown value {(int)spec.WaitStrategy}; allowed for '{transport.Id}': {allowedWaits}");
            if (!capabilities.WaitModes.Contains(waitMode))
            {
                throw Invalid("spec.wait_strategy", $"{WaitStrategyName(spec.WaitStrategy)} is not supported by '{transport.Id}'; allowed: {allowedWaits}");
            }
        }

        if (spec.Name.Length > 200)
        {
            throw Invalid("spec.name", $"must be at most 200 characters; got {spec.Name.Length}");
        }

        RequireRange("spec.latency_sample_every", spec.LatencySampleEvery, 0, LatencySampling.MaxEvery);
        int sampleEvery = LatencySampling.Resolve(spec.LatencySampleEvery, mode == Mode.RoundTrip, spec.RatePerPublisher);

        var placement = _placement.Resolve(spec, waitMode);

        return new ResolvedSpec(transport, spec.Publishers, spec.Subscribers, spec.PayloadBytes, duration, warmup,
            spec.RatePerPublisher, ScenarioProtos.FromProto(topology), ScenarioProtos.FromProto(access), ScenarioProtos.FromProto(mode), waitMode,
            spec.Name, sampleEvery)
        {
            Placement = placement,
        };
    }

    public static string WaitStrategyName(WaitStrategy strategy) =>
        ControlReflection.Descriptor.EnumTypes.First(e => e.Name == nameof(WaitStrategy)).FindValueByNumber((int)strategy)?.Name ?? ((int)strategy).ToString();

    private static TimeSpan? ReadDuration(string field, Google.Protobuf.WellKnownTypes.Duration? value, bool allowZero)
    {
        if (value is null)
        {
            return null;
        }

        if (value.Seconds < 0 || value.Nanos < 0 || value.Nanos >= 1_000_000_000)
        {
            throw Invalid(field, $"must not be negative; got {value.Seconds}s {value.Nanos}ns");
        }

        // Checked on the seconds before converting: protobuf's own range (about 10,000 years) ends long before long's,
        // and ToTimeSpan throws beyond it.
        if (value.Seconds > (long)MaxDuration.TotalSeconds || value.ToTimeSpan() > MaxDuration)
        {
            throw Invalid(field, $"must be at most {MaxDuration.TotalDays:0} days; got {value.Seconds}s {value.Nanos}ns");
        }

        var span = value.ToTimeSpan();

        if (!allowZero && span == TimeSpan.Zero)
        {
            throw Invalid(field, "must be positive, or absent to run until StopScenario");
        }

        return span;
    }

    private static void RequireRange(string field, int value, int min, int max)
    {
        if (value < min || value > max)
        {
            throw Invalid(field, $"must be {min}..{max}; got {value}");
        }
    }

    /// <summary>Enough of a value the caller sent to recognise it; the rest would only bloat the status message.</summary>
    private static string Quote(string value) => value.Length <= 64 ? value : string.Concat(value.AsSpan(0, 64), "...");

    private static RequestRefusedException Invalid(string field, string message) => new(RefusalKind.InvalidArgument, field, message);
}
