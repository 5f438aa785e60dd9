using System.ComponentModel.DataAnnotations;
using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// How the iceoryx2 transport sizes and guards its services: configuration section IpcBench:Transports:iceoryx2. Only
/// the publishing side (the daemon) sizes services; subscribers open them as they are.
/// </summary>
public sealed record Iceoryx2Settings
{
    /// <summary>Target bytes queued per subscriber (queue depth = this / slot size, within 2..<see cref="MaxQueueDepth"/>).</summary>
    [Range(1, 1024L * 1024 * 1024)]
    public long QueueBytesPerSubscriber { get; init; } = 4L * 1024 * 1024;

    /// <summary>Upper bound of a subscriber's queue depth in messages.</summary>
    [Range(2, 65_536)]
    public int MaxQueueDepth { get; init; } = 256;

    /// <summary>Shared memory one publisher's data segment should stay under; the queue depth shrinks (down to 2) to fit.</summary>
    [Range(1, 1024L * 1024 * 1024 * 1024)]
    public long MaxBytesPerPublisher { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// A send that cannot deliver to a full subscriber for this long fails (the subscriber's process is presumably
    /// dead: iceoryx2 itself would wait forever).
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "1.00:00:00")]
    public TimeSpan SendTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>Longest a BLOCK wait sleeps in the kernel before it looks at cancellation and closing again.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "00:01:00")]
    public TimeSpan BlockWaitSlice { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>How long a subscriber waits for its publishers' services to show every publisher.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "01:00:00")]
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>The native library to load instead of the libipcbench_iox2.so beside the assemblies (a debugging aid).</summary>
    public string? LibraryPath { get; init; }

    /// <summary>iceoryx2's own console log level (stderr): Trace, Debug, Info, Warn, Error or Fatal.</summary>
    [EnumDataType(typeof(Iceoryx2LogLevel))]
    public Iceoryx2LogLevel LogLevel { get; init; } = Iceoryx2LogLevel.Error;

    /// <summary>
    /// Checked for free space before a publisher is created: the shared-memory directory the daemon was given, not a
    /// setting of its own. iceoryx2 itself creates its segments with shm_open, i.e. in /dev/shm.
    /// </summary>
    public string SharedMemoryDirectory { get; internal init; } = TransportSettings.DefaultSharedMemoryDirectory;
}
