using HdrHistogram;
using IpcBench.Transports;

namespace IpcBench.Workload;

/// <param name="RatePerSecond">0 = as fast as the transport's backpressure allows.</param>
/// <param name="EchoesPerMessage">Round trip only: how many subscribers echo each message.</param>
/// <param name="MessageLimit">Stop after this many messages; 0 = until asked to stop.</param>
/// <param name="LatencySampleEvery">Latency is measured for one message in this many (1 = every message).</param>
public sealed record PublisherPlan(
    int PublisherIndex,
    int PayloadBytes,
    bool FullPayload,
    double RatePerSecond,
    bool RoundTrip,
    int EchoesPerMessage,
    WaitMode WaitMode,
    long MessageLimit = 0,
    int LatencySampleEvery = 1);

/// <summary>
/// One publisher's hot loop, run on its own thread. With a rate, each message is stamped with its intended send time,
/// so a stall shows up as latency of the messages that waited behind it (no coordinated omission). The loop is compiled
/// once per transport (<see cref="IPublisherLoop"/>): every per-message call into the transport is direct.
/// </summary>
public sealed class PublisherWorker(IPublisherEndpoint endpoint, PublisherPlan plan, MeasurementWindow window) : IPublisherLoop
{
    private const long BlockWakeEarlyNs = 100_000;
    private const long MaxSleepNs = 10_000_000;

    private long _sent;
    private long _badEchoes;
    private volatile bool _stopRequested;
    private CancellationToken _cancellationToken;

    public PublisherPlan Plan => plan;

    public long Sent => Volatile.Read(ref _sent);

    /// <summary>Round trip only: echoes whose header did not match the message sent.</summary>
    public long BadEchoes => Volatile.Read(ref _badEchoes);

    public LongHistogram RoundTripLatency { get; } = LatencyHistograms.Create();

    /// <summary>
    /// Rate-limited runs only: per measured message, how long after its intended send time the loop got to send it
    /// (the clock read that ended the wait, before the message is written), in nanoseconds. Latency is measured from the
    /// intended time, so this is the part of a latency tail that is the harness's own lateness; empty in closed loop.
    /// Recorded by the publisher's thread alone; read it as <see cref="RoundTripLatency"/> is read (IntervalHistogramReader).
    /// </summary>
    public LongHistogram SenderLag { get; } = LatencyHistograms.Create();

    public void RequestStop() => _stopRequested = true;

    public void Run(CancellationToken cancellationToken)
    {
        _cancellationToken = cancellationToken;
        endpoint.Run(this);
    }

    void IPublisherLoop.Run<TPath>(TPath path)
    {
        long sent = Publish(ref path, _cancellationToken);
        SendEndOfStream(ref path, sent);
    }

    private long Publish<TPath>(ref TPath path, CancellationToken cancellationToken)
        where TPath : struct, IPublisherPath
    {
        int messageBytes = MessageHeader.MessageBytes(plan.PayloadBytes);
        var flags = plan.FullPayload ? MessageFlags.FullPayload : MessageFlags.None;
        double intervalNs = plan.RatePerSecond > 0 ? 1e9 / plan.RatePerSecond : 0;
        int sampleEvery = Math.Max(1, plan.LatencySampleEvery);
        int untilSample = 1;
        long startNs = MonotonicClock.NowNs();
        long lastStampNs = startNs;
        long sequence = 0;
        var measured = MessageFlags.None;

        long limit = plan.MessageLimit > 0 ? plan.MessageLimit : long.MaxValue;
        while (!_stopRequested && !cancellationToken.IsCancellationRequested && sequence < limit)
        {
            bool sampled = --untilSample == 0;
            if (sampled)
            {
                untilSample = sampleEvery;
            }

            long stampNs;
            if (intervalNs > 0)
            {
                stampNs = startNs + (long)(sequence * intervalNs);
                if (!WaitUntil(stampNs, cancellationToken, out long lateNs))
                {
                    break;
                }

                if (stampNs >= window.FromNs)
                {
                    SenderLag.RecordLatency(lateNs);
                }
            }
            else
            {
                // Closed loop: the clock is read only for the messages whose latency is measured.
                stampNs = sampled ? lastStampNs = MonotonicClock.NowNs() : lastStampNs;
            }

            if (sampled || intervalNs > 0)
            {
                // Only a new stamp can move a message into the window.
                measured = stampNs >= window.FromNs ? MessageFlags.Measured : MessageFlags.None;
            }

            var header = new MessageHeader
            {
                PayloadLength = plan.PayloadBytes,
                PublisherIndex = (ushort)plan.PublisherIndex,
                Flags = (sampled ? flags | MessageFlags.LatencySample : flags) | measured,
                Sequence = sequence,
                SendTimestampNs = stampNs,
            };
            var first = path.LoanFirstSegment(messageBytes);
            if (!path.Segmented || first.Length >= messageBytes)
            {
                // The whole message in one loan: one pass writes the payload and checksums it; the header, written
                // last, takes the checksum.
                if (plan.FullPayload)
                {
                    byte fill = PayloadChecksum.FillByte(sequence, plan.PublisherIndex);
                    header.Checksum = PayloadChecksum.FillAndCompute(first[MessageHeader.Size..messageBytes], fill, (ulong)sequence);
                }

                header.Write(first);
            }
            else
            {
                SegmentedWriter.Write(ref path, first, ref header, plan.FullPayload);
            }

            path.Send();
            sequence++;
            Volatile.Write(ref _sent, sequence);

            if (plan.RoundTrip)
            {
                AwaitEchoes(ref path, sequence - 1, stampNs, sampled && measured == MessageFlags.Measured, cancellationToken);
            }
        }

        return sequence;
    }

    /// <param name="measured">
    /// Whether the message went out flagged Measured (and sampled): the subscriber counts it by that flag, so its echo is
    /// timed by the same decision. Reading the window again here counted one echo too many when the window began between
    /// the send and the echo (a stamp a moment past the start the daemon had read, before it published it).
    /// </param>
    private void AwaitEchoes<TPath>(ref TPath path, long sequence, long stampNs, bool measured, CancellationToken cancellationToken)
        where TPath : struct, IPublisherPath
    {
        for (int i = 0; i < plan.EchoesPerMessage; i++)
        {
            if (!path.TryReceiveReply(out var reply, cancellationToken))
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    return;
                }

                throw new IOException($"Publisher {plan.PublisherIndex}: a subscriber's link closed while its echo of message {sequence} was awaited.");
            }

            var echoed = MessageHeader.Read(reply);
            long nowNs = measured ? MonotonicClock.NowNs() : 0;
            path.ReleaseReply();
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

    private void SendEndOfStream<TPath>(ref TPath path, long sequence)
        where TPath : struct, IPublisherPath
    {
        // A header alone is never split: the first segment holds at least a header.
        var message = path.LoanFirstSegment(MessageHeader.Size);
        new MessageHeader
        {
            PayloadLength = 0,
            PublisherIndex = (ushort)plan.PublisherIndex,
            Flags = MessageFlags.EndOfStream,
            Sequence = sequence,
            SendTimestampNs = MonotonicClock.NowNs(),
        }.Write(message);
        path.Send();
    }

    /// <param name="lateNs">How far past <paramref name="targetNs"/> the wait ended (0 or more): read off the clock the wait reads anyway.</param>
    private bool WaitUntil(long targetNs, CancellationToken cancellationToken, out long lateNs)
    {
        lateNs = 0;
        while (true)
        {
            if (_stopRequested || cancellationToken.IsCancellationRequested)
            {
                return false;
            }

            long nowNs = MonotonicClock.NowNs();
            long remainingNs = targetNs - nowNs;
            if (remainingNs <= 0)
            {
                lateNs = -remainingNs;
                return true;
            }

            // Sleep while far ahead of schedule, then wait the last stretch per the strategy. BLOCK sleeps to just short
            // of the send time (the wake-up lands tens of µs late) and yields the rest; sleeps are capped so a stop is
            // seen within a few ms even at a rate of one message a minute.
            if (plan.WaitMode == WaitMode.Block && remainingNs > BlockWakeEarlyNs)
            {
                MonotonicSleep.Until(Math.Min(targetNs - BlockWakeEarlyNs, nowNs + MaxSleepNs));
            }
            else if (remainingNs > 2_000_000)
            {
                Thread.Sleep(1);
            }
            else
            {
                Idle.Pause(plan.WaitMode);
            }
        }
    }
}
