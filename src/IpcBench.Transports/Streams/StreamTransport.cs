namespace IpcBench.Transports.Streams;

/// <summary>
/// Shared shape of the byte-stream transports (sockets, pipes): one connection per publisher-subscriber pair,
/// a publisher writes each message once per connected subscriber, framing by the message header.
/// </summary>
public abstract class StreamTransport : ITransport
{
    protected static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(10);

    public abstract string Id { get; }

    public abstract string Description { get; }

    public abstract TransportCapabilities Capabilities { get; }

    public virtual string? UnavailableReason => null;

    protected abstract IStreamListener Listen(PublisherOptions options);

    protected abstract StreamLink Connect(string address, SubscriberOptions options, CancellationToken cancellationToken);

    public IPublisherEndpoint CreatePublisher(PublisherOptions options) =>
        new StreamPublisherEndpoint(Listen(options), options.MaxMessageBytes);

    public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken)
    {
        var receivers = new List<FramedReceiver>(options.Publishers.Count);
        try
        {
            foreach (var publisher in options.Publishers)
            {
                var link = Connect(publisher.Address, options, cancellationToken);
                receivers.Add(new FramedReceiver(link, [publisher.PublisherIndex], options.MaxMessageBytes));
            }
        }
        catch
        {
            receivers.ForEach(r => r.Link.Dispose());
            throw;
        }

        return new StreamSubscriberEndpoint(receivers);
    }

    public virtual void RemoveStaleResources(TransportEnvironment environment)
    {
    }

    private sealed class StreamSubscriberEndpoint(List<FramedReceiver> receivers) : ISubscriberEndpoint
    {
        public IReadOnlyList<IMessageReceiver> Receivers => receivers;

        public void Dispose() => receivers.ForEach(r => r.Link.Dispose());
    }
}

internal sealed class StreamPublisherEndpoint(IStreamListener listener, int maxMessageBytes) : IPublisherEndpoint
{
    private readonly List<FramedReceiver> _links = [];
    private readonly byte[] _sendBuffer = GC.AllocateUninitializedArray<byte>(maxMessageBytes, pinned: true);
    private int _loanedLength;
    private int _nextReplyLink;
    private FramedReceiver? _replyHeld;

    public string Address => listener.Address;

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (_links.Count < count)
        {
            var remaining = deadline - DateTime.UtcNow;
            if (remaining <= TimeSpan.Zero)
            {
                throw new TimeoutException($"Only {_links.Count} of {count} subscribers connected to {Address} within {timeout.TotalSeconds:0.#} s.");
            }

            var link = listener.Accept(remaining, cancellationToken);
            _links.Add(new FramedReceiver(link, [], maxMessageBytes));
        }
    }

    public Span<byte> Loan(int length)
    {
        _loanedLength = length;
        return _sendBuffer.AsSpan(0, length);
    }

    public void Send()
    {
        var message = _sendBuffer.AsSpan(0, _loanedLength);
        foreach (var link in _links)
        {
            link.Link.Send(message);
        }
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        // Every subscriber echoes every message once and in order, so reading the links in turn sees each echo.
        var link = _links[_nextReplyLink];
        _nextReplyLink = (_nextReplyLink + 1) % _links.Count;
        _replyHeld = link;
        return link.TryReceive(out reply, cancellationToken);
    }

    public void ReleaseReply()
    {
        _replyHeld?.Release();
        _replyHeld = null;
    }

    public void Dispose()
    {
        foreach (var link in _links)
        {
            link.Link.Dispose();
        }

        listener.Dispose();
    }

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IPublisherPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(StreamPublisherEndpoint endpoint) : IPublisherPath
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
