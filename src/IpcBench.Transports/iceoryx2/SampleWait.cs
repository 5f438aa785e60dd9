using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// The samples a receiver holds: a batch taken from iceoryx2 in one native call and handed out one by one. The batch
/// it has finished with is released by the call that takes the next one (nothing is held while the receiver waits).
/// </summary>
internal sealed class SampleBatch(int capacity)
{
    private readonly ReceivedSample[] _samples = new ReceivedSample[Math.Max(1, capacity)];
    private int _held;
    private int _next;

    /// <summary>Hands out the next sample of the current batch; false when the batch is used up.</summary>
    public bool TryTake(out ReadOnlySpan<byte> payload)
    {
        int next = _next;
        if (next < _held)
        {
            payload = _samples[next].Payload;
            _next = next + 1;
            return true;
        }

        payload = default;
        return false;
    }

    /// <summary>Releases the current batch and takes the next one (one native call); false when nothing was waiting.</summary>
    public bool Refill(Iceoryx2Subscriber subscriber)
    {
        int held = _held;
        // The call releases the held samples even when it throws: never hand them in twice.
        _held = 0;
        _next = 0;
        _held = subscriber.ReleaseAndTryReceiveBatch(_samples, held);
        return _held > 0;
    }
}

/// <summary>
/// The transport's one receive loop, for data samples and echoes alike: poll per wait mode, or sleep on the event
/// listener under BLOCK, until a sample arrives, the caller cancels, the port is closing, or every publisher has left.
/// </summary>
internal static class SampleWait
{
    // Under SPIN/YIELD, empty polls between two checks that the publishers are still there (a native call).
    private const int LivenessCheckMask = 0xFFFF;

    public static bool Next(
        Iceoryx2Subscriber subscriber,
        SampleBatch batch,
        out ReadOnlySpan<byte> payload,
        Iceoryx2Listener? listener,
        WaitMode waitMode,
        TimeSpan blockWaitSlice,
        PortGate gate,
        CancellationToken cancellationToken)
    {
        if (batch.TryTake(out payload))
        {
            return true;
        }

        int idle = 0;
        while (true)
        {
            if (batch.Refill(subscriber))
            {
                return batch.TryTake(out payload);
            }

            if (cancellationToken.IsCancellationRequested || gate.IsClosing)
            {
                return false;
            }

            if (listener is not null)
            {
                if (!listener.Wait(blockWaitSlice) && PublishersGone(subscriber))
                {
                    return false;
                }
            }
            else
            {
                Idle.Pause(waitMode);
                if ((++idle & LivenessCheckMask) == 0 && PublishersGone(subscriber))
                {
                    return false;
                }
            }
        }
    }

    /// <summary>No publisher left and nothing queued: what is still in the queue is delivered first.</summary>
    private static bool PublishersGone(Iceoryx2Subscriber subscriber) =>
        subscriber.GetServiceInfo().Publishers == 0 && !subscriber.HasSamples;
}
