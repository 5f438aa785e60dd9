using NetMQ;

namespace IpcBench.Transports.ZeroMq;

/// <summary>
/// A publisher's ROUTER on an ephemeral loopback port. Each subscriber's DEALER says hello; the publisher then addresses
/// every message to each known identity in turn. ROUTER_MANDATORY turns a full peer into a wait (backpressure) and a
/// vanished peer into an error, where a plain ROUTER (or PUB) would drop.
/// </summary>
internal sealed class ZeroMqPublisherEndpoint : IPublisherEndpoint
{
    private readonly GuardedSocket _router;
    private readonly List<byte[]> _subscribers = [];
    private byte[] _loaned = [];
    private int _loanedLength;
    private Msg _replyIdentity;
    private Msg _reply;

    public ZeroMqPublisherEndpoint(PublisherOptions options)
    {
        var router = ZeroMqSockets.NewRouter(options.MaxMessageBytes);
        try
        {
            // Not ipc://: NetMQ maps that to TCP on 127.0.0.1 too, at a port hashed from the name, which may collide
            // with a port in use. An ephemeral port says what it is and cannot collide.
            int port = router.BindRandomPort("tcp://127.0.0.1");
            Address = $"tcp://127.0.0.1:{port}";
        }
        catch
        {
            router.Dispose();
            throw;
        }

        _router = new GuardedSocket(router, options.WaitMode);
        _replyIdentity.InitEmpty();
        _reply.InitEmpty();
    }

    public string Address { get; }

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        var identity = new Msg();
        var body = new Msg();
        identity.InitEmpty();
        body.InitEmpty();
        try
        {
            while (_subscribers.Count < count)
            {
                // Setup, not the hot path: sleep rather than spin however the scenario waits.
                if (!_router.TryReceive(ref identity, WaitMode.Block, cancellationToken, deadline)
                    || !_router.TryReceive(ref body, WaitMode.Block, cancellationToken, deadline))
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    ObjectDisposedException.ThrowIf(_router.IsClosed, this);
                    throw new TimeoutException($"Only {_subscribers.Count} of {count} subscribers said hello to {Address} within {timeout.TotalSeconds:0.#} s.");
                }

                var id = identity.ToArray();
                if (((ReadOnlySpan<byte>)body).SequenceEqual(ZeroMqSockets.Hello) && !_subscribers.Any(known => known.AsSpan().SequenceEqual(id)))
                {
                    _subscribers.Add(id);
                }
            }
        }
        finally
        {
            identity.Close();
            body.Close();
        }
    }

    public Span<byte> Loan(int length)
    {
        // A fresh array per message: NetMQ sends asynchronously, so its I/O thread may still be writing the previous
        // message out of its array. Every subscriber's frame then shares this one array (no copy per subscriber, where
        // TrySendFrame would allocate and copy once per subscriber).
        _loaned = GC.AllocateUninitializedArray<byte>(length);
        _loanedLength = length;
        return _loaned;
    }

    public void Send()
    {
        foreach (var identity in _subscribers)
        {
            var address = new Msg();
            address.InitGC(identity, identity.Length);
            var message = new Msg();
            message.InitGC(_loaned, _loanedLength);

            // A full subscriber makes the identity frame wait; once it is taken the message frame goes to the same
            // pipe without waiting, so a message is never half sent.
            if (!_router.TrySend(ref address, more: true) || !_router.TrySend(ref message, more: false))
            {
                throw new IOException($"The ZeroMQ link of {Address} was closed while a message was being sent.");
            }
        }
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        // A reply is [identity][echo]; every subscriber echoes every message once, so who sent it does not matter.
        if (!_router.TryReceive(ref _replyIdentity, cancellationToken) || !_router.TryReceive(ref _reply, cancellationToken))
        {
            reply = default;
            return false;
        }

        reply = _reply;
        return true;
    }

    public void ReleaseReply()
    {
        _reply.Close();
        _reply.InitEmpty();
    }

    public void Dispose() => _router.Dispose();

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IPublisherPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(ZeroMqPublisherEndpoint endpoint) : IPublisherPath
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
