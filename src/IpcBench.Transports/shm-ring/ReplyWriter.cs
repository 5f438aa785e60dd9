using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using static IpcBench.Transports.SharedMemory.RingLayout;

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// A subscriber's echoes in a round trip: written into its own small reply ring in the publisher's file, which the
/// publisher's <see cref="ReplyReader"/> reads. Used by the receiver's thread only, inside its mapping.
/// </summary>
[SupportedOSPlatform("linux")]
internal sealed unsafe class ReplyWriter
{
    private readonly ShmRingReceiver _receiver;
    private readonly byte* _ring;
    private readonly long* _writtenShared;
    private readonly long* _readShared;
    private readonly int* _closed;
    private readonly int* _waitingForReply;
    private readonly int* _publisherSignal;
    private readonly WaitMode _waitMode;
    private long _written;

    public ReplyWriter(ShmRingReceiver receiver, byte* file, RingGeometry geometry, int slot, WaitMode waitMode)
    {
        _receiver = receiver;
        byte* record = file + geometry.CursorTableOffset + (long)slot * CursorBytes;
        _ring = file + geometry.ReplyAreaOffset + (long)slot * RingGeometry.ReplyRingBytes;
        _writtenShared = (long*)(record + ReplyWrittenOffset);
        _readShared = (long*)(record + ReplyReadOffset);
        _closed = (int*)(file + ClosedOffset);
        _waitingForReply = (int*)(file + WaitingForReplyOffset);
        _publisherSignal = (int*)(file + PublisherSignalOffset);
        _waitMode = waitMode;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Write(ReadOnlySpan<byte> message)
    {
        if (message.Length > ReplySlotBytes - ReplyHeaderBytes)
        {
            ThrowTooLong(message.Length);
        }

        long written = _written;
        if (written - Volatile.Read(ref *_readShared) >= ReplySlotCount)
        {
            WaitForSpace(written);
        }

        byte* entry = _ring + (written & (ReplySlotCount - 1)) * ReplySlotBytes;
        message.CopyTo(new Span<byte>(entry + ReplyHeaderBytes, message.Length));
        *(int*)entry = message.Length;
        _written = written + 1;
        Volatile.Write(ref *_writtenShared, written + 1);
        if (_waitMode == WaitMode.Block)
        {
            WakePublisher();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WakePublisher()
    {
        // A full fence between our write and the read of the publisher's flag, as the publisher fences the other way.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref *_waitingForReply) != 0)
        {
            Interlocked.Increment(ref *_publisherSignal);
            LinuxNative.FutexWake(_publisherSignal, 1);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowTooLong(int length) =>
        throw new ArgumentException($"shm-ring replies carry up to {ReplySlotBytes - ReplyHeaderBytes} bytes, not {length}.", "message");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void WaitForSpace(long written)
    {
        // Only reachable if the publisher stops reading echoes; it reads one per message, so this is a safety net.
        while (written - Volatile.Read(ref *_readShared) >= ReplySlotCount)
        {
            if (_receiver.IsClosing || Volatile.Read(ref *_closed) != 0)
            {
                throw new IOException($"shm-ring {_receiver.Path}: the link closed while an echo waited for room.");
            }

            if (!_receiver.CheckLivenessIfDue())
            {
                throw new IOException($"shm-ring {_receiver.Path}: the publisher (pid {_receiver.PublisherPid}) is gone.");
            }

            Idle.Pause(_waitMode == WaitMode.Block ? WaitMode.Yield : _waitMode);
        }
    }
}
