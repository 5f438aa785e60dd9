using IpcBench.Transports;

namespace IpcBench.Workload;

public sealed record SubscriberPlan(int PayloadBytes, bool FullPayload, bool RoundTrip, int TotalPublishers);

/// <summary>
/// One receiver's hot loop: validates every header, verifies every payload byte under FULL, tracks sequence numbers per
/// publisher to count lost and duplicated messages, records one-way latency, and echoes in round-trip mode.
/// Counters are written by this thread only and read by a reporter thread.
/// </summary>
public sealed class ReceiverWorker(IMessageReceiver receiver, SubscriberPlan plan, MeasurementWindow window)
{
    private readonly long[] _nextSequence = new long[plan.TotalPublishers];
    private long _received;
    private long _lost;
    private long _corrupted;
    private long _duplicated;
    private long _measuredReceived;
    private long _measuredBytes;
    private int _endOfStreams;

    public LatencyHistogram Latency { get; } = new();

    /// <summary>True once every publisher of this receiver has sent its end-of-stream.</summary>
    public bool SawEveryEndOfStream => Volatile.Read(ref _endOfStreams) >= receiver.PublisherIndexes.Count;

    public ReceiverCounters Counters => new(
        Volatile.Read(ref _received),
        Volatile.Read(ref _lost),
        Volatile.Read(ref _corrupted),
        Volatile.Read(ref _duplicated),
        Volatile.Read(ref _measuredReceived),
        Volatile.Read(ref _measuredBytes));

    /// <summary>Per publisher index: the next sequence number expected, i.e. how many it sent as far as this receiver knows.</summary>
    public long NextSequence(int publisherIndex) => Volatile.Read(ref _nextSequence[publisherIndex]);

    public void Run(CancellationToken cancellationToken)
    {
        int expectedLength = MessageHeader.Size + plan.PayloadBytes;
        int publishers = receiver.PublisherIndexes.Count;
        Span<byte> echo = stackalloc byte[MessageHeader.Size];
        while (_endOfStreams < publishers && receiver.TryReceive(out var message, cancellationToken))
        {
            var header = MessageHeader.Read(message);
            if ((header.Flags & MessageFlags.EndOfStream) != 0)
            {
                Track(header);
                _endOfStreams++;
                receiver.Release();
                continue;
            }

            long nowNs = MonotonicClock.NowNs();
            _received++;
            if (!IsIntact(header, message, expectedLength))
            {
                _corrupted++;
            }
            else
            {
                CountSequence(header);
            }

            if (header.SendTimestampNs >= window.FromNs)
            {
                _measuredReceived++;
                _measuredBytes += header.PayloadLength;
                if (!plan.RoundTrip)
                {
                    Latency.Record(nowNs - header.SendTimestampNs);
                }
            }

            if (plan.RoundTrip)
            {
                // The echo is the header alone (an acknowledgement): stream framing needs its payload length zeroed.
                var echoHeader = header;
                echoHeader.PayloadLength = 0;
                echoHeader.Write(echo);
                receiver.Reply(echo);
            }

            receiver.Release();
        }
    }

    private bool IsIntact(in MessageHeader header, ReadOnlySpan<byte> message, int expectedLength)
    {
        if (message.Length != expectedLength || header.PayloadLength != plan.PayloadBytes
            || header.PublisherIndex >= plan.TotalPublishers || header.Sequence < 0)
        {
            return false;
        }

        if (plan.FullPayload)
        {
            return (header.Flags & MessageFlags.FullPayload) != 0
                && PayloadChecksum.Compute(message[MessageHeader.Size..], (ulong)header.Sequence) == header.Checksum;
        }

        return true;
    }

    private void CountSequence(in MessageHeader header)
    {
        ref long next = ref _nextSequence[header.PublisherIndex];
        if (header.Sequence == next)
        {
            next++;
        }
        else if (header.Sequence > next)
        {
            _lost += header.Sequence - next;
            next = header.Sequence + 1;
        }
        else
        {
            _duplicated++;
        }
    }

    private void Track(in MessageHeader endOfStream)
    {
        if (endOfStream.PublisherIndex < plan.TotalPublishers)
        {
            ref long next = ref _nextSequence[endOfStream.PublisherIndex];
            if (endOfStream.Sequence > next)
            {
                // The tail that never arrived.
                _lost += endOfStream.Sequence - next;
                next = endOfStream.Sequence;
            }
        }
    }
}

public readonly record struct ReceiverCounters(
    long Received,
    long Lost,
    long Corrupted,
    long Duplicated,
    long MeasuredReceived,
    long MeasuredBytes)
{
    public static ReceiverCounters operator +(ReceiverCounters a, ReceiverCounters b) => new(
        a.Received + b.Received,
        a.Lost + b.Lost,
        a.Corrupted + b.Corrupted,
        a.Duplicated + b.Duplicated,
        a.MeasuredReceived + b.MeasuredReceived,
        a.MeasuredBytes + b.MeasuredBytes);
}
