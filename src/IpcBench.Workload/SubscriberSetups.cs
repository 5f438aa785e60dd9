using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload.Placement;

namespace IpcBench.Workload;

/// <summary>
/// A <see cref="SubscriberSetup"/> as transports and receivers take it, field by field: the daemon resolved every value
/// once, so nothing is derived or defaulted here. An unresolved enum is refused rather than guessed.
/// </summary>
public static class SubscriberSetups
{
    public static SubscriberOptions ToOptions(this SubscriberSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        return new SubscriberOptions(
            new TransportEnvironment(setup.RuntimeDirectory, setup.OwnerPid),
            setup.ScenarioKey,
            setup.SubscriberIndex,
            [.. setup.Publishers.Select(p => new PublisherAddress(p.PublisherIndex, p.Address))],
            setup.TotalPublishers,
            setup.TotalSubscribers,
            setup.MessageBytes,
            WaitStrategies.FromProto(setup.WaitStrategy) ?? throw Unresolved("wait_strategy", setup.WaitStrategy),
            IsRoundTrip(setup));
    }

    public static SubscriberPlan ToPlan(this SubscriberSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        return new SubscriberPlan(setup.PayloadBytes, IsFullPayload(setup), IsRoundTrip(setup), setup.TotalPublishers);
    }

    /// <summary>Where the subscriber's receiving threads run, as the daemon resolved it (its CPU and priority).</summary>
    public static ThreadPlacement ToPlacement(this SubscriberSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        if (!CpuSet.TryParse(setup.Cpus, out var cpus))
        {
            throw new ArgumentException($"the subscriber set-up's cpus '{setup.Cpus}' is not a CPU list; the daemon sends it resolved", nameof(setup));
        }

        if (setup.RealtimePriority is < 0 or > RealtimePermission.MaxPriority)
        {
            throw Unresolved("realtime_priority", setup.RealtimePriority);
        }

        return new ThreadPlacement(cpus, setup.RealtimePriority);
    }

    /// <summary>The transport's settings as the set-up carries them: the shared-memory directory and its own section.</summary>
    public static TransportSettings ToTransportSettings(this SubscriberSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        return new TransportSettings(
            setup.SharedMemoryDirectory,
            [new(setup.Transport, setup.TransportSettings.ToDictionary(StringComparer.OrdinalIgnoreCase))]);
    }

    /// <summary>The set-up's transport, configured as the daemon configured it (what an agent connects with).</summary>
    public static ITransport CreateTransport(this SubscriberSetup setup) =>
        TransportRegistry.CreateDefault(setup.ToTransportSettings()).Find(setup.Transport)
        ?? throw new InvalidOperationException($"this process does not know transport '{setup.Transport}'");

    private static bool IsRoundTrip(SubscriberSetup setup) => setup.Mode switch
    {
        Mode.Stream => false,
        Mode.RoundTrip => true,
        _ => throw Unresolved("mode", setup.Mode),
    };

    private static bool IsFullPayload(SubscriberSetup setup) => setup.PayloadAccess switch
    {
        PayloadAccess.Full => true,
        PayloadAccess.HeaderOnly => false,
        _ => throw Unresolved("payload_access", setup.PayloadAccess),
    };

    private static ArgumentException Unresolved<T>(string field, T value) =>
        new($"the subscriber set-up's {field} is {value}; the daemon sends it resolved", "setup");
}
