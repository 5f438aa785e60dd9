namespace IpcBench.Transports.Streams;

/// <summary>
/// Cuts a byte stream into messages using the header's payload length. Messages are handed out as spans of the
/// receive buffer, so the only copy is the kernel's into that buffer.
/// </summary>
public sealed class FramedReceiver : IMessageReceiver
{
    private readonly StreamLink _link;
    private readonly int _maxMessageBytes;
    private readonly byte[] _buffer;
    private int _start;
    private int _end;
    private int _pending;

    public FramedReceiver(StreamLink link, IReadOnlyList<int> publisherIndexes, int maxMessageBytes)
    {
        _link = link;
        _maxMessageBytes = maxMessageBytes;
        PublisherIndexes = publisherIndexes;
        // Room for two whole messages, so a large message never waits on a compaction of the previous one.
        _buffer = GC.AllocateUninitializedArray<byte>(Math.Max(256 * 1024, 2 * maxMessageBytes), pinned: true);
    }

    public IReadOnlyList<int> PublisherIndexes { get; }

    public StreamLink Link => _link;

    public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken)
    {
        while (true)
        {
            int available = _end - _start;
            int needed = MessageHeader.Size;
            if (available >= MessageHeader.Size)
            {
                int payloadLength = MessageHeader.ReadPayloadLength(_buffer.AsSpan(_start));
                needed = MessageHeader.MessageBytes(payloadLength);
                if (payloadLength < 0 || needed > _maxMessageBytes)
                {
                    throw new InvalidDataException(
                        $"Stream framing lost: a frame announces {payloadLength} payload bytes; the maximum is {_maxMessageBytes - MessageHeader.Size}.");
                }

                if (available >= needed)
                {
                    message = _buffer.AsSpan(_start, needed);
                    _pending = needed;
                    return true;
                }
            }

            if (_buffer.Length - _start < needed)
            {
                // The rest of this frame would not fit behind it: move the partial frame to the front.
                _buffer.AsSpan(_start, available).CopyTo(_buffer);
                _start = 0;
                _end = available;
            }

            int received = _link.Receive(_buffer.AsSpan(_end), cancellationToken);
            if (received == 0)
            {
                message = default;
                return false;
            }

            _end += received;
        }
    }

    public void Release()
    {
        _start += _pending;
        _pending = 0;
        if (_start == _end)
        {
            _start = _end = 0;
        }
    }

    public void Reply(ReadOnlySpan<byte> message) => _link.Send(message);

    public void Run(IReceiverLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IReceiverPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(FramedReceiver receiver) : IReceiverPath
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
