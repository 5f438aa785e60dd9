using System.Collections.Concurrent;

namespace IpcBench.Transports.Channels;

/// <summary>
/// The in-process baseline: System.Threading.Channels between threads of one process. A message is written once into a
/// pooled buffer and the same buffer is handed to every subscriber (reference counted), as shared memory would be.
/// </summary>
public sealed class ChannelsTransport : ITransport
{
    private static readonly ConcurrentDictionary<string, ChannelPublisher> Publishers = new();

    public string Id => "channels";

    public string Description => "System.Threading.Channels, in-process only (publishers and subscribers are threads of the daemon)";

    public TransportCapabilities Capabilities { get; } = new(
        CrossProcess: false,
        ZeroCopy: true,
        SupportsRoundTrip: true,
        WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
        DefaultWaitMode: WaitMode.Yield,
        MaxPayloadBytes: TransportCapabilities.LargestPayloadBytes);

    public string? UnavailableReason => null;

    public IPublisherEndpoint CreatePublisher(PublisherOptions options)
    {
        var address = $"inproc:{options.ScenarioKey}/p{options.PublisherIndex}";
        var publisher = new ChannelPublisher(address, options, () => Publishers.TryRemove(address, out _));
        if (!Publishers.TryAdd(address, publisher))
        {
            throw new InvalidOperationException($"In-process publisher {address} already exists.");
        }

        return publisher;
    }

    public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken)
    {
        var receivers = new List<IMessageReceiver>();
        foreach (var address in options.Publishers)
        {
            if (!Publishers.TryGetValue(address.Address, out var publisher))
            {
                throw new InvalidOperationException($"No in-process publisher at {address.Address}; the channels transport cannot cross processes.");
            }

            receivers.Add(publisher.Attach(address.PublisherIndex, options.WaitMode));
        }

        return new ChannelSubscriber(receivers);
    }

    private sealed class ChannelSubscriber(List<IMessageReceiver> receivers) : ISubscriberEndpoint
    {
        public IReadOnlyList<IMessageReceiver> Receivers => receivers;

        public void Dispose()
        {
            foreach (var receiver in receivers)
            {
                ((ChannelLink)receiver).Close();
            }
        }
    }
}

/// <summary>A message buffer shared by every subscriber of a publisher; free again when the last one releases it.</summary>
internal sealed class PooledMessage(byte[] buffer)
{
    private int _references;

    public byte[] Buffer { get; } = buffer;

    public int Length { get; set; }

    public bool InUse => Volatile.Read(ref _references) != 0;

    public void SetReferences(int count) => Volatile.Write(ref _references, count);

    public void AddReference() => Interlocked.Increment(ref _references);

    public void Release() => Interlocked.Decrement(ref _references);
}

internal sealed class ChannelLink : IMessageReceiver
{
    private readonly WaitMode _waitMode;
    private PooledMessage? _held;

    public ChannelLink(int publisherIndex, int capacity, WaitMode waitMode)
    {
        _waitMode = waitMode;
        PublisherIndexes = [publisherIndex];
        Messages = new SignalledChannel(capacity);
        Replies = new SignalledChannel(1);
    }

    public IReadOnlyList<int> PublisherIndexes { get; }

    public SignalledChannel Messages { get; }

    public SignalledChannel Replies { get; }

    public WaitMode WaitMode => _waitMode;

    public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken)
    {
        if (Messages.TryRead(_waitMode, cancellationToken, out var pooled))
        {
            _held = pooled;
            message = pooled.Buffer.AsSpan(0, pooled.Length);
            return true;
        }

        message = default;
        return false;
    }

    public void Reply(ReadOnlySpan<byte> message)
    {
        // The echo is the very buffer received: in-process there is nothing to copy back.
        var held = _held!;
        held.AddReference();
        Replies.Write(held, _waitMode);
    }

    public void Release()
    {
        _held?.Release();
        _held = null;
    }

    public void Close()
    {
        Messages.Complete();
        Replies.Complete();
    }

    public void Run(IReceiverLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IReceiverPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(ChannelLink receiver) : IReceiverPath
    {
        public bool Segmented => false;

        public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken)
        {
            bool received = receiver.TryReceive(out segment, cancellationToken);
            messageLength = segment.Length;
            return received;
        }

        public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken)
        {
            segment = default;
            return false;
        }

        public void Reply(ReadOnlySpan<byte> message) => receiver.Reply(message);

        public void Release() => receiver.Release();
    }
}

internal sealed class ChannelPublisher : IPublisherEndpoint
{
    private readonly PublisherOptions _options;
    private readonly Action _unregister;
    private PooledMessage[] _buffers = [];
    private int _nextBuffer;
    private readonly List<ChannelLink> _links = [];
    private readonly int _capacity;
    private readonly object _gate = new();
    private ChannelLink[] _snapshot = [];
    private PooledMessage? _loaned;
    private int _nextReply;
    private PooledMessage? _replyHeld;

    public ChannelPublisher(string address, PublisherOptions options, Action unregister)
    {
        Address = address;
        _options = options;
        _unregister = unregister;
        // Bound queued bytes per link to ~64 MiB so large payloads do not balloon the pool.
        _capacity = Math.Clamp(64 * 1024 * 1024 / options.MaxMessageBytes, 4, 1024);
    }

    public string Address { get; }

    public ChannelLink Attach(int publisherIndex, WaitMode waitMode)
    {
        var link = new ChannelLink(publisherIndex, _capacity, waitMode);
        lock (_gate)
        {
            _links.Add(link);
            Monitor.PulseAll(_gate);
        }

        return link;
    }

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = DateTime.UtcNow + timeout;
        lock (_gate)
        {
            while (_links.Count < count)
            {
                cancellationToken.ThrowIfCancellationRequested();
                if (DateTime.UtcNow >= deadline)
                {
                    throw new TimeoutException($"Only {_links.Count} of {count} subscribers attached to {Address}.");
                }

                Monitor.Wait(_gate, TimeSpan.FromMilliseconds(50));
            }

            _snapshot = [.. _links];
        }

        // Every buffer the run can have in flight, made now, so that the loop never allocates. Each link holds at most
        // a full queue and the one its receiver works on, all among the latest sends, so buffers taken in turn are free
        // again by the time they come round (one more for the loan, one spare).
        _buffers = new PooledMessage[_capacity + 3];
        for (int i = 0; i < _buffers.Length; i++)
        {
            _buffers[i] = new PooledMessage(GC.AllocateUninitializedArray<byte>(_options.MaxMessageBytes));
        }
    }

    public Span<byte> Loan(int length)
    {
        var message = _buffers[_nextBuffer];
        _nextBuffer = _nextBuffer + 1 == _buffers.Length ? 0 : _nextBuffer + 1;
        while (message.InUse)
        {
            // Only for the moment between a receiver taking the next message and releasing this one.
            Thread.Yield();
        }

        message.Length = length;
        _loaned = message;
        return message.Buffer.AsSpan(0, length);
    }

    public void Send()
    {
        var message = _loaned!;
        _loaned = null;
        message.SetReferences(_snapshot.Length);
        foreach (var link in _snapshot)
        {
            link.Messages.Write(message, link.WaitMode);
        }
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        var link = _snapshot[_nextReply];
        _nextReply = (_nextReply + 1) % _snapshot.Length;
        if (link.Replies.TryRead(_options.WaitMode, cancellationToken, out var message))
        {
            _replyHeld = message;
            reply = message.Buffer.AsSpan(0, message.Length);
            return true;
        }

        reply = default;
        return false;
    }

    public void ReleaseReply()
    {
        _replyHeld?.Release();
        _replyHeld = null;
    }

    public void Dispose()
    {
        lock (_gate)
        {
            _links.ForEach(l => l.Close());
        }

        _unregister();
    }

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IPublisherPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(ChannelPublisher endpoint) : IPublisherPath
    {
        public bool Segmented => false;

        public bool FirstSegmentWritableUntilSend => true;

        public Span<byte> LoanFirstSegment(int length) => endpoint.Loan(length);

        public Span<byte> LoanNextSegment() => [];

        public void Send() => endpoint.Send();

        public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) =>
            endpoint.TryReceiveReply(out reply, cancellationToken);

        public void ReleaseReply() => endpoint.ReleaseReply();
    }
}
