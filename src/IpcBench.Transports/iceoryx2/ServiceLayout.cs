using System.Globalization;
using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// Names and sizes of the iceoryx2 services of one scenario.
/// <list type="bullet">
/// <item>Data: <c>ipcbench/PID/KEY/all</c> shared by every publisher under ALL_TO_ALL (each subscriber has one port that
/// receives from all of them), or <c>ipcbench/PID/KEY/pI</c> per publisher under PAIRED. The name is the address.</item>
/// <item>BLOCK: the event service <c>DATA/event</c> (publishers notify, each subscriber listens).</item>
/// <item>ROUND_TRIP: per publisher I a reply service <c>DATA/replyI</c> (subscribers publish their echoes, the publisher
/// subscribes) and, under BLOCK, its event service <c>DATA/replyI/event</c>.</item>
/// </list>
/// </summary>
internal static class ServiceLayout
{
    /// <summary>
    /// Most samples a receiver takes from iceoryx2 in one native call and holds until it has handed them all out: one
    /// call per batch instead of one per message (see <see cref="BorrowedSamples"/>).
    /// </summary>
    public const int MaxReceiveBatch = 16;

    /// <summary>Borrowed samples the queue depth leaves room for, as bench/native sizes it (one message at a time).</summary>
    private const int MinBorrowedSamples = 1;

    /// <summary>Loans one publisher may hold: one message at a time, one spare.</summary>
    public const int PublisherLoans = 2;

    /// <summary>An allowance per slot for iceoryx2's own sample header and alignment (an estimate for sizing only).</summary>
    public const int SlotOverheadBytes = 64;

    /// <summary>Nodes beyond the publishers' and subscribers' own (one node per endpoint): room for a tool to attach.</summary>
    private const int SpareNodes = 2;

    public static string DataService(PublisherOptions options, bool shared) =>
        string.Create(CultureInfo.InvariantCulture, $"ipcbench/{options.Environment.OwnerPid}/{options.ScenarioKey}/{(shared ? "all" : $"p{options.PublisherIndex}")}");

    public static string EventService(string dataService) => dataService + "/event";

    public static string ReplyService(string dataService, int publisherIndex) =>
        string.Create(CultureInfo.InvariantCulture, $"{dataService}/reply{publisherIndex}");

    public static string ReplyEventService(string dataService, int publisherIndex) => ReplyService(dataService, publisherIndex) + "/event";

    public static string NodeName(string scenarioKey, string role) => Truncate($"ipcbench-{scenarioKey}-{role}", 128);

    /// <summary>
    /// ALL_TO_ALL (every subscriber of the scenario subscribes to this publisher) shares one service between all
    /// publishers; PAIRED gets one service per publisher. With one publisher and one subscriber both are the same.
    /// </summary>
    public static bool IsShared(PublisherOptions options) => options.ExpectedSubscribers >= options.TotalSubscribers;

    /// <summary>The data service's configuration, as its publishers create it.</summary>
    public static PublishSubscribeOptions DataOptions(PublisherOptions options, Iceoryx2Settings settings, out long bytesPerPublisher)
    {
        bool shared = IsShared(options);
        int publishers = shared ? options.TotalPublishers : 1;
        int subscribers = Math.Max(1, options.ExpectedSubscribers);
        int depth = QueueDepth(options.MaxMessageBytes, subscribers, settings);
        int borrowed = BorrowedSamples(options.MaxMessageBytes, subscribers, depth, settings);
        bytesPerPublisher = SegmentBytes(options.MaxMessageBytes, subscribers, depth, borrowed);
        return new PublishSubscribeOptions
        {
            MaxMessageSize = options.MaxMessageBytes,
            MaxPublishers = publishers,
            MaxSubscribers = subscribers,
            MaxNodes = publishers + subscribers + SpareNodes,
            SubscriberBufferSize = depth,
            SubscriberMaxBorrowedSamples = borrowed,
            PublisherMaxLoanedSamples = PublisherLoans,
            DeliveryMode = DeliveryMode.NoLoss,
            SendTimeout = settings.SendTimeout,
        };
    }

    public static EventOptions DataEventOptions(PublisherOptions options)
    {
        bool shared = IsShared(options);
        int publishers = shared ? options.TotalPublishers : 1;
        int subscribers = Math.Max(1, options.ExpectedSubscribers);
        return new EventOptions { MaxNotifiers = publishers, MaxListeners = subscribers, MaxNodes = publishers + subscribers + SpareNodes };
    }

    /// <summary>Echoes (a bare header) from every subscriber of one publisher; one is in flight per subscriber.</summary>
    public static PublishSubscribeOptions ReplyOptions(PublisherOptions options, Iceoryx2Settings settings)
    {
        int subscribers = Math.Max(1, options.ExpectedSubscribers);
        return new PublishSubscribeOptions
        {
            MaxMessageSize = MessageHeader.Size,
            MaxPublishers = subscribers,
            MaxSubscribers = 1,
            MaxNodes = subscribers + 1 + SpareNodes,
            SubscriberBufferSize = 2,
            SubscriberMaxBorrowedSamples = MinBorrowedSamples,
            PublisherMaxLoanedSamples = PublisherLoans,
            DeliveryMode = DeliveryMode.NoLoss,
            SendTimeout = settings.SendTimeout,
        };
    }

    public static EventOptions ReplyEventOptions(PublisherOptions options)
    {
        int subscribers = Math.Max(1, options.ExpectedSubscribers);
        return new EventOptions { MaxNotifiers = subscribers, MaxListeners = 1, MaxNodes = subscribers + 1 + SpareNodes };
    }

    /// <summary>
    /// What a subscriber passes when it opens a service the publisher created: 0 counts are not verified, so the
    /// subscriber takes the service as it is; the delivery mode must match.
    /// </summary>
    public static PublishSubscribeOptions OpenOptions(int maxMessageBytes, Iceoryx2Settings settings) => new()
    {
        MaxMessageSize = Math.Max(1, maxMessageBytes),
        PublisherMaxLoanedSamples = PublisherLoans,
        DeliveryMode = DeliveryMode.NoLoss,
        SendTimeout = settings.SendTimeout,
    };

    /// <summary>
    /// Queue depth per subscriber: about <see cref="Iceoryx2Settings.QueueBytesPerSubscriber"/> of messages (deep for
    /// small messages, a few for large ones so the ring stays cache-sized), at most <see cref="Iceoryx2Settings.MaxQueueDepth"/>,
    /// shrunk so the publisher's segment stays under <see cref="Iceoryx2Settings.MaxBytesPerPublisher"/>, never below 2.
    /// </summary>
    public static int QueueDepth(int maxMessageBytes, int subscribers, Iceoryx2Settings settings)
    {
        long slot = (long)maxMessageBytes + SlotOverheadBytes;
        long depth = Math.Clamp(settings.QueueBytesPerSubscriber / slot, 2, settings.MaxQueueDepth);
        long fitting = ((settings.MaxBytesPerPublisher / slot) - PublisherLoans) / subscribers - MinBorrowedSamples;
        return (int)Math.Max(2, Math.Min(depth, fitting));
    }

    /// <summary>
    /// Samples one subscriber may hold, i.e. its receive batch: a quarter of the queue, 1..<see cref="MaxReceiveBatch"/>
    /// (16 for messages up to 16 KB, 15 at 64 KB, 1 at 512 KB where a message costs far more than a native call), and 1
    /// where the extra slots would push the publisher's segment over <see cref="Iceoryx2Settings.MaxBytesPerPublisher"/>.
    /// A quarter keeps most of the queue for messages still to come while the receiver works through a batch.
    /// </summary>
    public static int BorrowedSamples(int maxMessageBytes, int subscribers, int depth, Iceoryx2Settings settings)
    {
        int batch = Math.Clamp(depth / 4, MinBorrowedSamples, MaxReceiveBatch);
        return batch > MinBorrowedSamples && SegmentBytes(maxMessageBytes, subscribers, depth, batch) > settings.MaxBytesPerPublisher
            ? MinBorrowedSamples
            : batch;
    }

    /// <summary>iceoryx2's data segment of one publisher: subscribers × (queue + borrowed) + loans samples.</summary>
    public static long SegmentBytes(int maxMessageBytes, int subscribers, int depth, int borrowed) =>
        ((long)subscribers * (depth + borrowed) + PublisherLoans) * ((long)maxMessageBytes + SlotOverheadBytes);

    /// <summary>Throws a clear error when the scenario's publishers' segments cannot fit the shared-memory file system.</summary>
    public static void EnsureSharedMemoryFits(PublisherOptions options, long bytesPerPublisher, Iceoryx2Settings settings)
    {
        long needed = bytesPerPublisher * Math.Max(1, options.TotalPublishers);
        long available;
        try
        {
            available = new DriveInfo(settings.SharedMemoryDirectory).AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return; // Nothing to compare with: let iceoryx2 report what it runs into.
        }

        if (needed > available)
        {
            throw new IOException(string.Create(CultureInfo.InvariantCulture,
                $"iceoryx2: this scenario needs about {Mib(needed)} MiB of shared memory ({options.TotalPublishers} publisher(s) × {Mib(bytesPerPublisher)} MiB: " +
                $"{options.ExpectedSubscribers} subscriber(s) × {QueueDepth(options.MaxMessageBytes, Math.Max(1, options.ExpectedSubscribers), settings)}-message queues of {options.MaxMessageBytes} B), " +
                $"but {settings.SharedMemoryDirectory} has only {Mib(available)} MiB free; use smaller payloads or fewer publishers/subscribers, or enlarge {settings.SharedMemoryDirectory}"));
        }
    }

    private static long Mib(long bytes) => (bytes + (1 << 20) - 1) >> 20;

    private static string Truncate(string value, int length) => value.Length <= length ? value : value[..length];
}
