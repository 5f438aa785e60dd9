using System.Globalization;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// How the iceoryx2 transport sizes and guards its services. Only the publishing side (the daemon) sizes services;
/// subscribers open them as they are. Defaults can be overridden with environment variables
/// IPCBENCH_ICEORYX2_QUEUE_BYTES, IPCBENCH_ICEORYX2_MAX_BYTES_PER_PUBLISHER and IPCBENCH_ICEORYX2_SEND_TIMEOUT_MS.
/// </summary>
public sealed record Iceoryx2Settings
{
    /// <summary>Target bytes queued per subscriber (queue depth = this / slot size, within 2..<see cref="MaxQueueDepth"/>).</summary>
    public long QueueBytesPerSubscriber { get; init; } = 4L * 1024 * 1024;

    /// <summary>Upper bound of a subscriber's queue depth in messages.</summary>
    public int MaxQueueDepth { get; init; } = 256;

    /// <summary>Shared memory one publisher's data segment should stay under; the queue depth shrinks (down to 2) to fit.</summary>
    public long MaxBytesPerPublisher { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// A send that cannot deliver to a full subscriber for this long fails (the subscriber's process is presumably
    /// dead: iceoryx2 itself would wait forever).
    /// </summary>
    public TimeSpan SendTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>Longest a BLOCK wait sleeps in the kernel before it looks at cancellation and closing again.</summary>
    public TimeSpan BlockWaitSlice { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>How long a subscriber waits for its publishers' services to show every publisher.</summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>Where iceoryx2 keeps its shared memory (checked for free space before a publisher is created).</summary>
    public string SharedMemoryDirectory { get; init; } = "/dev/shm";

    public static Iceoryx2Settings FromEnvironment()
    {
        var settings = new Iceoryx2Settings();
        if (ReadLong("IPCBENCH_ICEORYX2_QUEUE_BYTES") is { } queue)
        {
            settings = settings with { QueueBytesPerSubscriber = queue };
        }

        if (ReadLong("IPCBENCH_ICEORYX2_MAX_BYTES_PER_PUBLISHER") is { } perPublisher)
        {
            settings = settings with { MaxBytesPerPublisher = perPublisher };
        }

        if (ReadLong("IPCBENCH_ICEORYX2_SEND_TIMEOUT_MS") is { } timeout)
        {
            settings = settings with { SendTimeout = TimeSpan.FromMilliseconds(timeout) };
        }

        return settings;
    }

    private static long? ReadLong(string variable) =>
        long.TryParse(Environment.GetEnvironmentVariable(variable), NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value > 0
            ? value
            : null;
}
