using NetMQ;

namespace IpcBench.Transports.ZeroMq;

/// <summary>
/// One subscriber's DEALER connected to one publisher's ROUTER. The ROUTER strips its routing frame, so each message
/// arrives as one frame, received into a reused <see cref="Msg"/> and handed out in place.
/// </summary>
internal sealed class ZeroMqReceiver : IMessageReceiver
{
    private readonly GuardedSocket _dealer;
    private Msg _message;

    private ZeroMqReceiver(GuardedSocket dealer, int publisherIndex)
    {
        _dealer = dealer;
        PublisherIndexes = [publisherIndex];
        _message.InitEmpty();
    }

    public IReadOnlyList<int> PublisherIndexes { get; }

    /// <summary>
    /// Connects and says hello. ZeroMQ connects in the background, but the DEALER queues the hello until it does, and
    /// the publisher counts a subscriber only once the hello arrived: nothing sent after that can miss it. The hello is
    /// taken at once: a DEALER attaches its pipe when it connects, not when the connection is up.
    /// </summary>
    public static ZeroMqReceiver Connect(PublisherAddress publisher, SubscriberOptions options, CancellationToken cancellationToken)
    {
        var dealer = ZeroMqSockets.NewDealer(options.MaxMessageBytes);
        var guarded = new GuardedSocket(dealer, options.WaitMode);
        try
        {
            dealer.Connect(publisher.Address);
            var hello = new Msg();
            hello.InitPool(ZeroMqSockets.Hello.Length);
            ZeroMqSockets.Hello.CopyTo(hello);
            cancellationToken.ThrowIfCancellationRequested();
            if (!guarded.TrySend(ref hello, more: false))
            {
                throw new IOException($"Could not say hello to the ZeroMQ publisher at {publisher.Address}.");
            }
        }
        catch
        {
            guarded.Dispose();
            throw;
        }

        return new ZeroMqReceiver(guarded, publisher.PublisherIndex);
    }

    public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken)
    {
        // A publisher that died is not seen (ZeroMQ reconnects quietly): this waits until cancelled or disposed.
        if (!_dealer.TryReceive(ref _message, cancellationToken))
        {
            message = default;
            return false;
        }

        message = _message;
        return true;
    }

    public void Reply(ReadOnlySpan<byte> message)
    {
        // A fresh frame: the send is asynchronous, so a reused buffer could be overwritten before it leaves.
        var echo = new Msg();
        echo.InitPool(message.Length);
        message.CopyTo(echo);
        if (!_dealer.TrySend(ref echo, more: false))
        {
            echo.Close();
            throw new IOException("The ZeroMQ link was closed while an echo was being sent.");
        }
    }

    public void Release()
    {
        _message.Close();
        _message.InitEmpty();
    }

    public void Close() => _dealer.Dispose();

    public void Run(IReceiverLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IReceiverPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(ZeroMqReceiver receiver) : IReceiverPath
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
