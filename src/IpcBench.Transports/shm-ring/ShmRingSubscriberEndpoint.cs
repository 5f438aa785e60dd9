using System.Runtime.Versioning;

namespace IpcBench.Transports.SharedMemory;

/// <summary>One subscriber's connections: a receiver (own mapping, own cursor) per publisher ring.</summary>
[SupportedOSPlatform("linux")]
internal sealed class ShmRingSubscriberEndpoint(List<ShmRingReceiver> receivers) : ISubscriberEndpoint
{
    private int _disposed;

    public IReadOnlyList<IMessageReceiver> Receivers => receivers;

    internal IReadOnlyList<ShmRingReceiver> RingReceivers => receivers;

    /// <summary>
    /// Wakes receivers blocked in TryReceive (they return false), waits for them to leave the mapping, detaches their
    /// cursors so publishers stop waiting for them, and unmaps. May be called from another thread.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        receivers.ForEach(r => r.BeginClose());
        Interlocked.MemoryBarrierProcessWide();
        receivers.ForEach(r => r.WakeSelf());
        receivers.ForEach(r => r.Finish());
    }
}
