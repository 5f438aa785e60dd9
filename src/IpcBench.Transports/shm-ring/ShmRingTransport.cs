using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

[assembly: InternalsVisibleTo("IpcBench.Transports.Tests")]

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// Our own shared-memory transport: a memory-mapped file in /dev/shm per publisher holding one ring of fixed-size
/// slots, written once and read by every subscriber through its own cursor (Disruptor / Aeron IPC style). Messages that
/// fit a slot are written and read in place; larger ones travel in chunks. The layout and protocol are in README.md.
/// </summary>
public sealed class ShmRingTransport(ShmRingSettings settings) : ITransport
{
    public const string FilePrefix = "ipcbench.ring.";

    private const string TransportId = "shm-ring";

    public ShmRingTransport()
        : this(new ShmRingSettings())
    {
    }

    /// <summary>Section IpcBench:Transports:shm-ring; the rings go in the one shared-memory directory.</summary>
    public ShmRingTransport(TransportSettings settings)
        : this(settings.Bind<ShmRingSettings>(TransportId) with { Directory = settings.SharedMemoryDirectory })
    {
    }

    public ShmRingSettings Settings { get; } = settings;

    public string Id => TransportId;

    public string Description =>
        "Memory-mapped file in /dev/shm: one ring per publisher written once, one cursor per subscriber (Disruptor style); " +
        "zero-copy up to the slot size, larger messages chunked; BLOCK sleeps on a futex";

    public TransportCapabilities Capabilities { get; } = new(
        CrossProcess: true,
        ZeroCopy: true,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Yield,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes);

    public string? UnavailableReason
    {
        get
        {
            if (!OperatingSystem.IsLinux())
            {
                return "shm-ring needs Linux (futex, /dev/shm)";
            }

            if (!LinuxNative.FutexSupported)
            {
                return $"shm-ring knows the futex system call number on x64 and arm64 only, not {RuntimeInformation.ProcessArchitecture}";
            }

            return Directory.Exists(Settings.Directory) ? null : $"the shared-memory directory {Settings.Directory} does not exist";
        }
    }

    public IPublisherEndpoint CreatePublisher(PublisherOptions options)
    {
        if (!OperatingSystem.IsLinux())
        {
            throw new PlatformNotSupportedException(UnavailableReason);
        }

        // Owner pid first, so RemoveStaleResources can tell files of dead daemons from live ones.
        var path = Path.Combine(Settings.Directory, $"{FilePrefix}{options.Environment.OwnerPid}.{options.ScenarioKey}.p{options.PublisherIndex}");
        return new ShmRingPublisher(path, options, Settings);
    }

    /// <summary>The ring file's size: it is created sparse, but a running ring touches every page of it.</summary>
    public long SharedMemoryBytes(PublisherOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return RingGeometry.Compute(options.MaxMessageBytes, Math.Max(options.ExpectedSubscribers, options.TotalSubscribers), Settings).FileBytes;
    }

    public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken)
    {
        if (!OperatingSystem.IsLinux())
        {
            throw new PlatformNotSupportedException(UnavailableReason);
        }

        var receivers = new List<ShmRingReceiver>(options.Publishers.Count);
        try
        {
            foreach (var publisher in options.Publishers)
            {
                cancellationToken.ThrowIfCancellationRequested();
                receivers.Add(ShmRingReceiver.Attach(publisher, options));
            }
        }
        catch
        {
            new ShmRingSubscriberEndpoint(receivers).Dispose();
            throw;
        }

        return new ShmRingSubscriberEndpoint(receivers);
    }

    public void RemoveStaleResources(TransportEnvironment environment)
    {
        if (!OperatingSystem.IsLinux() || !Directory.Exists(Settings.Directory))
        {
            return;
        }

        foreach (var file in Directory.EnumerateFiles(Settings.Directory, FilePrefix + "*"))
        {
            var owner = Path.GetFileName(file)[FilePrefix.Length..].Split('.')[0];
            if (int.TryParse(owner, NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
                && pid != environment.OwnerPid && !ProcessInstance.IsRunning(pid))
            {
                try
                {
                    File.Delete(file);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    // Someone else's, or removed meanwhile; the next start tries again.
                }
            }
        }
    }
}

/// <summary>
/// Sizes of the rings this process creates (subscribers read them from the file): configuration section
/// IpcBench:Transports:shm-ring. The directory is not a setting of its own: it is IpcBench:SharedMemoryDirectory.
/// </summary>
public sealed record ShmRingSettings : IValidatableObject
{
    /// <summary>A 64 KiB payload with its message header fits one slot; anything larger is chunked.</summary>
    public const int DefaultSlotDataBytes = 64 * 1024 + MessageHeader.Size;

    /// <summary>
    /// Small on purpose: a ring that fits the last-level cache is written and read at cache speed, while a 64 MiB ring
    /// made every 64 KiB message a round trip to DRAM (measured 2-4x slower for 64 KB and 1 MB payloads).
    /// </summary>
    public const long DefaultRingBytes = 4L * 1024 * 1024;

    /// <summary>Where ring files live: the shared-memory directory the daemon was given.</summary>
    public string Directory { get; internal init; } = TransportSettings.DefaultSharedMemoryDirectory;

    /// <summary>Chunk size: data bytes per slot (a slot adds a 16-byte header and pads to 64 bytes).</summary>
    [Range(64, TransportCapabilities.LargestPayloadBytes + MessageHeader.Size)]
    public int SlotDataBytes { get; init; } = DefaultSlotDataBytes;

    /// <summary>Upper bound on slot memory per publisher; the slot count is the largest power of two that fits.</summary>
    [Range(2 * 1024, 1024L * 1024 * 1024)]
    public long RingBytes { get; init; } = DefaultRingBytes;

    [Range(2, RingLayout.MaxSlotCount)]
    public int MaxSlots { get; init; } = 4096;

    /// <summary>A gating subscriber whose cursor and heartbeat have both stood still this long is evicted as stalled.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "1.00:00:00")]
    public TimeSpan StallTimeout { get; init; } = TimeSpan.FromSeconds(10);

    public IEnumerable<ValidationResult> Validate(ValidationContext validationContext)
    {
        if ((long)SlotDataBytes * 2 > RingBytes)
        {
            yield return new ValidationResult(
                string.Create(CultureInfo.InvariantCulture, $"must fit twice into RingBytes ({RingBytes})"), [nameof(SlotDataBytes)]);
        }
    }

    internal void Validate()
    {
        if (SlotDataBytes < 64 || (long)SlotDataBytes * 2 > RingBytes || MaxSlots < 2 || StallTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentException(
                $"shm-ring settings: slot data bytes {SlotDataBytes} must be at least 64 and fit twice into ring bytes {RingBytes}; max slots {MaxSlots} at least 2");
        }
    }
}
