using HdrHistogram;
using IpcBench.Transports;

namespace IpcBench.Workload;

public sealed record SubscriberPlan(int PayloadBytes, bool FullPayload, bool RoundTrip, int TotalPublishers);

/// <summary>
/// One receiver's hot loop: validates every header, verifies every payload byte under FULL, tracks sequence numbers per
/// publisher to count lost and duplicated messages, records one-way latency of the sampled messages, and echoes in
/// round-trip mode. Counters are written by this thread only and read by a reporter thread. The loop is compiled once
/// per transport (<see cref="IReceiverLoop"/>): every per-message call into the transport is direct.
/// </summary>
public sealed class ReceiverWorker(IMessageReceiver receiver, SubscriberPlan plan) : IReceiverLoop
{
    private readonly long[] _nextSequence = new long[plan.TotalPublishers];
    private long _received;
    private long _lost;
    private long _corrupted;
    private long _duplicated;
    private long _measuredReceived;
    private long _measuredBytes;
    private int _endOfStreams;
    private CancellationToken _cancellationToken;

    /// <summary>Every latency this receiver measured, growing; read per interval through <see cref="IntervalHistogramReader"/>.</summary>
    public LongHistogram Latency { get; } = LatencyHistograms.Create();

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
        _cancellationToken = cancellationToken;
        receiver.Run(this);
    }

    void IReceiverLoop.Run<TPath>(TPath path) => Receive(ref path, _cancellationToken);

    private void Receive<TPath>(ref TPath path, CancellationToken cancellationToken)
        where TPath : struct, IReceiverPath
    {
        int expectedLength = MessageHeader.MessageBytes(plan.PayloadBytes);
        int publishers = receiver.PublisherIndexes.Count;
        Span<byte> echo = stackalloc byte[MessageHeader.Size];
        while (_endOfStreams < publishers && path.TryReceiveFirstSegment(out var first, out int length, cancellationToken))
        {
            if (first.Length < MessageHeader.Size)
            {
                // Too short to hold a header: nothing in it can be trusted, not even which publisher sent it.
                Drain(ref path, cancellationToken);
                _received++;
                _corrupted++;
                path.Release();
                continue;
            }

            var header = MessageHeader.Read(first);
            if ((header.Flags & MessageFlags.EndOfStream) != 0)
            {
                Drain(ref path, cancellationToken);
                Track(header);
                _endOfStreams++;
                path.Release();
                continue;
            }

            // Arrival is when the last segment arrived, before it is verified, as for a message that comes in one piece. In a
            // round trip the publisher times the echo: a clock read here would only lengthen what it measures.
            bool sampled = !plan.RoundTrip && (header.Flags & MessageFlags.LatencySample) != 0;
            long nowNs = sampled ? MonotonicClock.NowNs() : 0;

            bool intact = IsPlausible(header, length, expectedLength);
            bool verify = intact && plan.FullPayload;
            if (!path.Segmented || first.Length >= length)
            {
                // The whole message in one piece: one pass, no carry-over.
                if (verify && PayloadChecksum.Compute(first[MessageHeader.Size..length], (ulong)header.Sequence) != header.Checksum)
                {
                    intact = false;
                }
            }
            else if (!ReceiveSegments(ref path, first, length, header, verify, sampled, ref nowNs, ref intact, cancellationToken))
            {
                // Cut short: the publisher abandoned it (it counts as lost when the next one arrives) or the link closed.
                path.Release();
                continue;
            }

            _received++;
            if (!intact)
            {
                _corrupted++;
            }
            else
            {
                CountSequence(header);
            }

            if ((header.Flags & MessageFlags.Measured) != 0)
            {
                _measuredReceived++;
                _measuredBytes += header.PayloadLength;
                if (sampled)
                {
                    Latency.RecordLatency(nowNs - header.SendTimestampNs);
                }
            }

            if (plan.RoundTrip)
            {
                // The echo is the header alone (an acknowledgement): stream framing needs its payload length zeroed.
                var echoHeader = header;
                echoHeader.PayloadLength = 0;
                echoHeader.Write(echo);
                path.Reply(echo);
            }

            path.Release();
        }
    }

    /// <summary>
    /// The rest of a message the transport hands out in pieces, verified where it lies, segment by segment (no reassembly
    /// copy). False when it was cut short; <paramref name="intact"/> turns false when a byte differs.
    /// </summary>
    private static bool ReceiveSegments<TPath>(
        ref TPath path, ReadOnlySpan<byte> first, int length, in MessageHeader header, bool verify, bool sampled, ref long nowNs, ref bool intact,
        CancellationToken cancellationToken)
        where TPath : struct, IReceiverPath
    {
        var checksum = new PayloadChecksum.Incremental(verify ? header.PayloadLength : 0, (ulong)header.Sequence);
        if (verify)
        {
            checksum.Append(first[MessageHeader.Size..]);
        }

        long arrived = first.Length;
        while (path.TryReceiveNextSegment(out var segment, cancellationToken))
        {
            if (sampled)
            {
                nowNs = MonotonicClock.NowNs();
            }

            arrived += segment.Length;
            if (verify)
            {
                checksum.Append(segment);
            }
        }

        if (arrived != length)
        {
            return false;
        }

        intact &= !verify || checksum.Matches(header.Checksum);
        return true;
    }

    private static void Drain<TPath>(ref TPath path, CancellationToken cancellationToken)
        where TPath : struct, IReceiverPath
    {
        while (path.Segmented && path.TryReceiveNextSegment(out _, cancellationToken))
        {
        }
    }

    /// <summary>Everything but the payload bytes; under FULL the caller then checks those against the checksum.</summary>
    private bool IsPlausible(in MessageHeader header, int length, int expectedLength) =>
        length == expectedLength && header.PayloadLength == plan.PayloadBytes
        && header.PublisherIndex < plan.TotalPublishers && header.Sequence >= 0
        && (!plan.FullPayload || (header.Flags & MessageFlags.FullPayload) != 0);

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
