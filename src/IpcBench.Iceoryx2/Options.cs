using IpcBench.Iceoryx2.Interop;

namespace IpcBench.Iceoryx2;

/// <summary>How a publish-subscribe service treats a subscriber whose buffer is full.</summary>
public enum DeliveryMode
{
    /// <summary>
    /// No loss: safe overflow is disabled on the service and publishers use
    /// <c>BackpressureStrategy::RetryUntilDelivered</c>, i.e. a send waits until every connected subscriber
    /// has room (optionally bounded by <see cref="PublishSubscribeOptions.SendTimeout"/>).
    /// </summary>
    NoLoss = 0,

    /// <summary>Lossy: safe overflow is enabled; a full subscriber queue drops its oldest sample.</summary>
    Lossy = 1,
}

/// <summary>
/// Configuration of a publish-subscribe service and its ports. Every process that opens the same service must
/// use the same values (iceoryx2 rejects a different <see cref="DeliveryMode"/>, and capacities larger than the
/// ones the service was created with). 0 in a count means "iceoryx2 default, not verified"
/// (defaults: 2 publishers, 8 subscribers, 20 nodes, buffer 2, 2 borrowed samples, 2 loans).
/// </summary>
public sealed record PublishSubscribeOptions
{
    /// <summary>Largest payload in bytes a publisher can loan or send (the publisher's slice length).</summary>
    public int MaxMessageSize { get; init; } = 4096;

    public int MaxPublishers { get; init; }

    public int MaxSubscribers { get; init; }

    public int MaxNodes { get; init; }

    /// <summary>Queue depth of each subscriber.</summary>
    public int SubscriberBufferSize { get; init; }

    /// <summary>How many received samples one subscriber may hold unreleased at the same time.</summary>
    public int SubscriberMaxBorrowedSamples { get; init; }

    /// <summary>How many loans one publisher may hold unsent at the same time.</summary>
    public int PublisherMaxLoanedSamples { get; init; }

    public DeliveryMode DeliveryMode { get; init; } = DeliveryMode.NoLoss;

    /// <summary>
    /// <see cref="DeliveryMode.NoLoss"/> only: when a subscriber's buffer stays full this long, the send fails with
    /// <see cref="Iceoryx2ErrorCode.DeliveryTimeout"/>. Null = wait forever.
    /// </summary>
    public TimeSpan? SendTimeout { get; init; }

    internal PubSubConfig ToNative()
    {
        if (MaxMessageSize <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxMessageSize), MaxMessageSize, "must be > 0");
        }

        return new PubSubConfig
        {
            MaxMessageSize = (ulong)MaxMessageSize,
            MaxPublishers = Count(MaxPublishers, nameof(MaxPublishers)),
            MaxSubscribers = Count(MaxSubscribers, nameof(MaxSubscribers)),
            MaxNodes = Count(MaxNodes, nameof(MaxNodes)),
            SubscriberBufferSize = Count(SubscriberBufferSize, nameof(SubscriberBufferSize)),
            SubscriberMaxBorrowedSamples = Count(SubscriberMaxBorrowedSamples, nameof(SubscriberMaxBorrowedSamples)),
            PublisherMaxLoanedSamples = Count(PublisherMaxLoanedSamples, nameof(PublisherMaxLoanedSamples)),
            Lossy = DeliveryMode == DeliveryMode.Lossy ? 1u : 0u,
            SendTimeoutUs = SendTimeout is { } t && t > TimeSpan.Zero ? Math.Max(1, (long)t.TotalMicroseconds) : 0,
        };
    }

    internal static uint Count(int value, string name) =>
        value >= 0 ? (uint)value : throw new ArgumentOutOfRangeException(name, value, "must be >= 0");
}

/// <summary>Configuration of an event service (0 = iceoryx2 default: 16 notifiers, 16 listeners, 36 nodes, max event id 255).</summary>
public sealed record EventOptions
{
    public int MaxNotifiers { get; init; }

    public int MaxListeners { get; init; }

    public int MaxNodes { get; init; }

    public int EventIdMaxValue { get; init; }

    internal EventConfig ToNative() => new()
    {
        MaxNotifiers = PublishSubscribeOptions.Count(MaxNotifiers, nameof(MaxNotifiers)),
        MaxListeners = PublishSubscribeOptions.Count(MaxListeners, nameof(MaxListeners)),
        MaxNodes = PublishSubscribeOptions.Count(MaxNodes, nameof(MaxNodes)),
        EventIdMaxValue = PublishSubscribeOptions.Count(EventIdMaxValue, nameof(EventIdMaxValue)),
    };
}

/// <summary>Snapshot of a publish-subscribe service's configuration and currently attached ports.</summary>
public readonly record struct ServiceInfo(
    int Publishers,
    int Subscribers,
    int MaxPublishers,
    int MaxSubscribers,
    int MaxNodes,
    int SubscriberBufferSize,
    int SubscriberMaxBorrowedSamples,
    DeliveryMode DeliveryMode)
{
    internal static ServiceInfo From(in NativeServiceInfo n) => new(
        (int)n.Publishers,
        (int)n.Subscribers,
        (int)n.MaxPublishers,
        (int)n.MaxSubscribers,
        (int)n.MaxNodes,
        (int)n.SubscriberBufferSize,
        (int)n.SubscriberMaxBorrowedSamples,
        n.SafeOverflow != 0 ? DeliveryMode.Lossy : DeliveryMode.NoLoss);
}

internal static class Timeouts
{
    /// <summary>TimeSpan → microseconds for the native API: negative (e.g. <see cref="Timeout.InfiniteTimeSpan"/>) = forever.</summary>
    internal static long ToMicroseconds(TimeSpan timeout) =>
        timeout < TimeSpan.Zero ? -1 : (long)Math.Min(timeout.TotalMicroseconds, long.MaxValue / 2);
}
