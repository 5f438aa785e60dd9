using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// iceoryx2 0.10 (zero-copy shared memory, through our Rust cdylib and C# bindings in IpcBench.Iceoryx2). One
/// publish-subscribe service per scenario (per pair under PAIRED) sized for its publishers and subscribers, no-loss
/// delivery, messages written and read in place in the shared-memory samples. Layout and choices: README.md here.
/// </summary>
public sealed class Iceoryx2Transport(Iceoryx2Settings settings) : ITransport
{
    public Iceoryx2Transport()
        : this(Iceoryx2Settings.FromEnvironment())
    {
    }

    public Iceoryx2Settings Settings { get; } = settings;

    public string Id => "iceoryx2";

    public string Description =>
        "iceoryx2 0.10 zero-copy shared memory (Rust, through our C ABI): one service per scenario, samples written and read in place, " +
        "no-loss backpressure; BLOCK sleeps on an iceoryx2 event";

    public TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: true,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Yield,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes);

    public string? UnavailableReason => Iceoryx2Library.UnavailableReason;

    public IPublisherEndpoint CreatePublisher(PublisherOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        EnsureAvailable();
        return new Iceoryx2PublisherEndpoint(options, Settings);
    }

    public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        EnsureAvailable();
        return Iceoryx2SubscriberEndpoint.Connect(options, Settings, cancellationToken);
    }

    /// <summary>The publisher's data segment; echo services (ROUND_TRIP) hold a few small samples and are left out.</summary>
    public long SharedMemoryBytes(PublisherOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        ServiceLayout.DataOptions(options, Settings, out long bytesPerPublisher);
        return bytesPerPublisher;
    }

    /// <summary>
    /// Removes what processes that died without disposing their iceoryx2 ports left behind (their nodes, ports and
    /// /dev/shm files): at daemon start and after every scenario.
    /// </summary>
    public void RemoveStaleResources(TransportEnvironment environment)
    {
        if (!Iceoryx2Library.IsAvailable)
        {
            return;
        }

        try
        {
            Iceoryx2Library.CleanupDeadNodes();
        }
        catch (Iceoryx2Exception e)
        {
            throw new IOException($"iceoryx2: removing the resources of dead nodes failed: {e.Message}", e);
        }
    }

    private void EnsureAvailable()
    {
        if (UnavailableReason is { } reason)
        {
            throw new PlatformNotSupportedException($"the {Id} transport is unavailable: {reason}");
        }
    }
}
