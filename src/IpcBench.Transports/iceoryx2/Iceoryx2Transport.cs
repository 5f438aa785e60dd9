using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// iceoryx2 0.10 (zero-copy shared memory, through our Rust cdylib and C# bindings in IpcBench.Iceoryx2). One
/// publish-subscribe service per scenario (per pair under PAIRED) sized for its publishers and subscribers, no-loss
/// delivery, messages written and read in place in the shared-memory samples. Layout and choices: README.md here.
/// </summary>
public sealed class Iceoryx2Transport : ITransport
{
    private const string TransportId = "iceoryx2";

    public Iceoryx2Transport()
        : this(new Iceoryx2Settings())
    {
    }

    /// <summary>Section IpcBench:Transports:iceoryx2, and the one shared-memory directory.</summary>
    public Iceoryx2Transport(TransportSettings settings)
        : this(settings.Bind<Iceoryx2Settings>(TransportId) with { SharedMemoryDirectory = settings.SharedMemoryDirectory })
    {
    }

    public Iceoryx2Transport(Iceoryx2Settings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        Settings = settings;
        // Process-wide, and read when the native library is first loaded: the transport is made before it is used.
        Iceoryx2Library.Configure(settings.LibraryPath, settings.LogLevel);
    }

    public Iceoryx2Settings Settings { get; }

    public string Id => TransportId;

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

    /// <summary>
    /// Also unavailable when the shared-memory directory is not /dev/shm: iceoryx2 creates its segments with shm_open,
    /// which on Linux is always /dev/shm, so admission control would be checking a directory iceoryx2 does not use.
    /// </summary>
    public string? UnavailableReason => Iceoryx2Library.UnavailableReason
        ?? (IsDevShm(Settings.SharedMemoryDirectory)
            ? null
            : $"iceoryx2 keeps its shared memory in {TransportSettings.DefaultSharedMemoryDirectory} (shm_open), not in the configured shared-memory directory {Settings.SharedMemoryDirectory} (IpcBench:SharedMemoryDirectory)");

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

    private static bool IsDevShm(string directory) =>
        string.Equals(Path.TrimEndingDirectorySeparator(Path.GetFullPath(directory)), TransportSettings.DefaultSharedMemoryDirectory, StringComparison.Ordinal);

    private void EnsureAvailable()
    {
        if (UnavailableReason is { } reason)
        {
            throw new PlatformNotSupportedException($"the {Id} transport is unavailable: {reason}");
        }
    }
}
