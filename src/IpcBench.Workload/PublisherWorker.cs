using HdrHistogram;
using IpcBench.Transports;

namespace IpcBench.Workload;

/// <param name="RatePerSecond">0 = as fast as the transport's backpressure allows.</param>
/// <param name="EchoesPerMessage">Round trip only: how many subscribers echo each message.</param>
/// <param name="MessageLimit">Stop after this many messages; 0 = until asked to stop.</param>
public sealed record PublisherPlan(
    int PublisherIndex,
    int PayloadBytes,
    bool FullPayload,
    double RatePerSecond,
    bool RoundTrip,
    int EchoesPerMessage,
    WaitMode WaitMode,
    long MessageLimit = 0);

/// <summary>
/// One publisher's hot loop, run on its own thread. With a rate, each message is stamped with its intended send time,
/// so a stall shows up as latency of the messages that waited behind it (no coordinated omission).
/// </summary>
public sealed class PublisherWorker(IPublisherEndpoint endpoint, PublisherPlan plan, MeasurementWindow window)
{
    private long _sent;
    private long _badEchoes;
    private volatile bool _stopRequested;

    public PublisherPlan Plan => plan;

    public long Sent => Volatile.Read(ref _sent);

    /// <summary>Round trip only: echoes whose header did not match the message sent.</summary>
    public long BadEchoes => Volatile.Read(ref _badEchoes);

    public LongHistogram RoundTripLatency { get; } = LatencyHistograms.Create();

    public void RequestStop() => _stopRequested = true;

    public void Run(CancellationToken cancellationToken)
    {
        int messageBytes = MessageHeader.Size + plan.PayloadBytes;
        var flags = plan.FullPayload ? MessageFlags.FullPayload : MessageFlags.None;
        double intervalNs = plan.RatePerSecond > 0 ? 1e9 / plan.RatePerSecond : 0;
        long startNs = MonotonicClock.NowNs();
        long sequence = 0;

        long limit = plan.MessageLimit > 0 ? plan.MessageLimit : long.MaxValue;
        while (!_stopRequested && !cancellationToken.IsCancellationRequested && sequence < limit)
        {
            long stampNs;
            if (intervalNs > 0)
            {
                stampNs = startNs + (long)(sequence * intervalNs);
                if (!WaitUntil(stampNs, cancellationToken))
                {
                    break;
                }
            }
            else
            {
                stampNs = MonotonicClock.NowNs();
            }

            var header = new MessageHeader
            {
                PayloadLength = plan.PayloadBytes,
                PublisherIndex = (ushort)plan.PublisherIndex,
                Flags = flags,
                Sequence = sequence,
                SendTimestampNs = stampNs,
            };
            byte fill = PayloadChecksum.FillByte(sequence, plan.PublisherIndex);
            var first = endpoint.LoanFirstSegment(messageBytes);
            if (first.Length >= messageBytes)
            {
                // The whole message in one loan (every message but shm-ring's chunked ones): one pass writes the payload
                // and checksums it; the header, written last, takes the checksum.
                if (plan.FullPayload)
                {
                    header.Checksum = PayloadChecksum.FillAndCompute(first[MessageHeader.Size..messageBytes], fill, (ulong)sequence);
                }

                header.Write(first);
            }
            else if (endpoint.FirstSegmentWritableUntilSend)
            {
                // The same, piece by piece in place.
                var checksum = new PayloadChecksum.Incremental(plan.PayloadBytes, (ulong)sequence);
                if (plan.FullPayload)
                {
                    checksum.AppendFilling(first[MessageHeader.Size..], fill);
                }

                Span<byte> segment;
                while (!(segment = endpoint.LoanNextSegment()).IsEmpty)
                {
                    if (plan.FullPayload)
                    {
                        checksum.AppendFilling(segment, fill);
                    }
                }

                if (plan.FullPayload)
                {
                    header.Checksum = checksum.Finish();
                }

                header.Write(first);
            }
            else
            {
                // The transport delivers the first piece (which holds the header) before the last is written, so the
                // header is stamped first with the checksum of the pattern about to be written, computed from registers
                // (the same per-block arithmetic, no memory reads). The receiver still reads every byte from the
                // transport and checks it against this.
                if (plan.FullPayload)
                {
                    header.Checksum = PayloadChecksum.ComputeFilled(plan.PayloadBytes, fill, (ulong)sequence);
                }

                header.Write(first);
                if (plan.FullPayload)
                {
                    first[MessageHeader.Size..].Fill(fill);
                }

                Span<byte> segment;
                while (!(segment = endpoint.LoanNextSegment()).IsEmpty)
                {
                    if (plan.FullPayload)
                    {
                        segment.Fill(fill);
                    }
                }
            }

            endpoint.Send();
            sequence++;
            Volatile.Write(ref _sent, sequence);

            if (plan.RoundTrip)
            {
                AwaitEchoes(sequence - 1, stampNs, cancellationToken);
            }
        }

        SendEndOfStream(sequence);
    }

    private void AwaitEchoes(long sequence, long stampNs, CancellationToken cancellationToken)
    {
        bool measured = stampNs >= window.FromNs;
        for (int i = 0; i < plan.EchoesPerMessage; i++)
        {
            if (!endpoint.TryReceiveReply(out var reply, cancellationToken))
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    return;
                }

                throw new IOException($"Publisher {plan.PublisherIndex}: a subscriber's link closed while its echo of message {sequence} was awaited.");
            }

            var echoed = MessageHeader.Read(reply);
            long nowNs = MonotonicClock.NowNs();
            endpoint.ReleaseReply();
            if (echoed.Sequence != sequence || echoed.PublisherIndex != plan.PublisherIndex)
            {
                _badEchoes++;
            }
            else if (measured)
            {
                RoundTripLatency.RecordLatency(nowNs - stampNs);
            }
        }
    }

    private void SendEndOfStream(long sequence)
    {
        var message = endpoint.Loan(MessageHeader.Size);
        new MessageHeader
        {
            PayloadLength = 0,
            PublisherIndex = (ushort)plan.PublisherIndex,
            Flags = MessageFlags.EndOfStream,
            Sequence = sequence,
            SendTimestampNs = MonotonicClock.NowNs(),
        }.Write(message);
        endpoint.Send();
    }

    private bool WaitUntil(long targetNs, CancellationToken cancellationToken)
    {
        while (true)
        {
            if (_stopRequested || cancellationToken.IsCancellationRequested)
            {
                return false;
            }

            long remainingNs = targetNs - MonotonicClock.NowNs();
            if (remainingNs <= 0)
            {
                return true;
            }

            // Sleep while far ahead of schedule (sleeps overshoot by ~0.1 ms), then wait the last stretch per the strategy.
            if (remainingNs > 2_000_000 || (plan.WaitMode == WaitMode.Block && remainingNs > 200_000))
            {
                Thread.Sleep(remainingNs > 2_000_000 ? 1 : 0);
            }
            else
            {
                Idle.Pause(plan.WaitMode);
            }
        }
    }
}
