using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

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
        ref ReceivedSample sample,
        Iceoryx2Listener? listener,
        WaitMode waitMode,
        TimeSpan blockWaitSlice,
        PortGate gate,
        CancellationToken cancellationToken)
    {
        int idle = 0;
        while (true)
        {
            // Releases the previous sample and takes the next one in one native call.
            if (subscriber.ReleaseAndTryReceive(ref sample))
            {
                return true;
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
