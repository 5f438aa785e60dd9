using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using static IpcBench.Transports.SharedMemory.RingLayout;

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// The publisher's reading of its subscribers' echoes in a round trip: each subscriber has a small reply ring in the file
/// (written by it, read here), and every subscriber echoes every message once and in order, so taking the subscribers
/// in turn sees each echo. Used by the publisher's thread only, inside its mapping.
/// </summary>
[SupportedOSPlatform("linux")]
internal sealed unsafe class ReplyReader
{
    private readonly ShmRingPublisher _publisher;
    private readonly SubscriberCursors _cursors;
    private readonly byte* _replies;
    private readonly int* _publisherSignal;
    private readonly int* _waitingForReply;
    private readonly WaitMode _waitMode;
    private int[] _order = [];
    private int _next;
    private int _held = -1;

    public ReplyReader(ShmRingPublisher publisher, SubscriberCursors cursors, byte* file, RingGeometry geometry, WaitMode waitMode)
    {
        _publisher = publisher;
        _cursors = cursors;
        _replies = file + geometry.ReplyAreaOffset;
        _publisherSignal = (int*)(file + PublisherSignalOffset);
        _waitingForReply = (int*)(file + WaitingForReplyOffset);
        _waitMode = waitMode;
    }

    /// <summary>Starts the turn over the subscribers tracked now (called once they have all attached).</summary>
    public void Restart()
    {
        _order = _cursors.TrackedSlots();
        _next = 0;
    }

    /// <summary>The next echo, in place in its reply ring until <see cref="Release"/>; false when its link closed or on cancellation.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryTake(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        reply = default;
        if (_order.Length == 0 && !StartTurn())
        {
            return false;
        }

        int slot = _order[_next];
        _next = _next + 1 == _order.Length ? 0 : _next + 1;
        byte* record = _cursors.Record(slot);
        long read = _cursors.ReplyRead(slot);
        if (Volatile.Read(ref *(long*)(record + ReplyWrittenOffset)) <= read && !WaitForReply(slot, record, read, cancellationToken))
        {
            return false;
        }

        byte* entry = _replies + (long)slot * RingGeometry.ReplyRingBytes + (read & (ReplySlotCount - 1)) * ReplySlotBytes;
        int length = *(int*)entry;
        if ((uint)length > ReplySlotBytes - ReplyHeaderBytes)
        {
            ThrowBadEntry(record, length);
        }

        reply = new ReadOnlySpan<byte>(entry + ReplyHeaderBytes, length);
        _held = slot;
        return true;
    }

    /// <summary>A first echo awaited before the subscribers were counted (a publisher that never waited for them).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool StartTurn()
    {
        _publisher.ScanCursors();
        Restart();
        return _order.Length > 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowBadEntry(byte* record, int length) => throw new InvalidDataException(
        $"shm-ring {_publisher.Address}: reply ring of subscriber {SubscriberCursors.SubscriberIndex(record)} holds an entry of {length} bytes.");

    /// <summary>Gives the echo last taken back to its subscriber's reply ring.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Release()
    {
        int slot = _held;
        if (slot >= 0)
        {
            _held = -1;
            long read = ++_cursors.ReplyRead(slot);
            Volatile.Write(ref *(long*)(_cursors.Record(slot) + ReplyReadOffset), read);
        }
    }

    private bool WaitForReply(int slot, byte* record, long read, CancellationToken cancellationToken)
    {
        long* written = (long*)(record + ReplyWrittenOffset);
        long started = Environment.TickCount64;
        long lastCheck = started;
        while (Volatile.Read(ref *written) <= read)
        {
            if (_publisher.IsClosing || cancellationToken.IsCancellationRequested)
            {
                return false;
            }

            long now = Environment.TickCount64;
            if (now - lastCheck >= ShmRingPublisher.LivenessIntervalMs)
            {
                lastCheck = now;
                if (Volatile.Read(ref *(int*)(record + StateOffset)) != CursorState.Active)
                {
                    // Detached or evicted: that link is closed.
                    _cursors.Untrack(slot);
                    return false;
                }

                _cursors.CheckLiveness(long.MaxValue, _publisher.Published, now, now - started, forReply: slot);
            }

            if (_waitMode == WaitMode.Block)
            {
                int observed = Volatile.Read(ref *_publisherSignal);
                Interlocked.Exchange(ref *_waitingForReply, 1);
                if (Volatile.Read(ref *written) <= read && !_publisher.IsClosing)
                {
                    LinuxNative.FutexWait(_publisherSignal, observed, ShmRingPublisher.LivenessIntervalMs);
                }

                Volatile.Write(ref *_waitingForReply, 0);
            }
            else
            {
                Idle.Pause(_waitMode);
            }
        }

        return true;
    }
}
