using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using static IpcBench.Transports.SharedMemory.RingLayout;

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// Reads one publisher's ring through one cursor. Messages that fit a slot are handed out in place (a span over the
/// shared memory, valid until <see cref="Release"/>). Chunked ones are handed out in place chunk by chunk by the
/// segmented receive, or reassembled into a buffer of this receiver by <see cref="TryReceive"/> for callers that need
/// contiguous bytes.
/// </summary>
[SupportedOSPlatform("linux")]
internal sealed unsafe class ShmRingReceiver : IMessageReceiver
{
    private const int LivenessIntervalMs = ShmRingPublisher.LivenessIntervalMs;

    private readonly RingMapping _mapping;
    private readonly WaitMode _waitMode;
    private readonly bool _block;
    private readonly int _ownPid = Environment.ProcessId;
    private readonly int _publisherPid;
    private readonly byte* _slots;
    private readonly int* _dataSignal;
    private readonly int* _dataWaiters;
    private readonly int* _closed;
    private readonly int* _waitingForSpace;
    private readonly long* _wakeAt;
    private readonly int* _publisherSignal;
    private readonly byte* _record;
    private readonly long* _cursor;
    private readonly int* _state;
    private readonly long* _heartbeat;
    private readonly int _slotMask;
    private readonly int _slotBytes;
    private readonly int _slotDataBytes;
    private readonly int _slotHeaderBytes;
    private readonly int _maxMessageBytes;

    /// <summary>Only for <see cref="TryReceive"/> of chunked messages; allocated on first use.</summary>
    private byte[]? _reassembly;

    private long _position;

    /// <summary>The cursor as the publisher sees it: <see cref="_position"/> is published in batches (see <see cref="Advance"/>).</summary>
    private long _cursorShared;
    private readonly long _cursorBatch;
    private bool _admitted;
    private bool _needsMessageStart;
    private bool _pending;

    /// <summary>A segmented receive of a chunked message is under way: chunk <see cref="_chunkIndex"/> of <see cref="_chunkCount"/> is held.</summary>
    private bool _segmented;
    private int _chunkIndex;
    private int _chunkCount;
    private int _messageLength;
    private readonly ReplyWriter _replies;
    private int _released;
    private long _lastHeartbeatMs;

    private int _inside;
    private volatile bool _closing;

    private ShmRingReceiver(RingMapping mapping, RingGeometry geometry, int slot, int publisherIndex, WaitMode waitMode)
    {
        _mapping = mapping;
        Geometry = geometry;
        CursorSlot = slot;
        PublisherIndexes = [publisherIndex];
        _waitMode = waitMode;
        _block = waitMode == WaitMode.Block;
        byte* file = mapping.Base;
        _publisherPid = *(int*)(file + OwnerPidOffset);
        _slots = file + geometry.SlotsOffset;
        _dataSignal = (int*)(file + DataSignalOffset);
        _dataWaiters = (int*)(file + DataWaitersOffset);
        _closed = (int*)(file + ClosedOffset);
        _waitingForSpace = (int*)(file + WaitingForSpaceOffset);
        _wakeAt = (long*)(file + WakeAtOffset);
        _publisherSignal = (int*)(file + PublisherSignalOffset);
        _record = file + geometry.CursorTableOffset + (long)slot * CursorBytes;
        _cursor = (long*)(_record + CursorOffset);
        _state = (int*)(_record + StateOffset);
        _heartbeat = (long*)(_record + HeartbeatOffset);
        _slotMask = geometry.SlotCount - 1;
        _cursorBatch = Math.Max(1, geometry.SlotCount / 8);
        _slotBytes = geometry.SlotBytes;
        _slotDataBytes = geometry.SlotDataBytes;
        _slotHeaderBytes = geometry.SlotHeaderBytes;
        _maxMessageBytes = geometry.MaxMessageBytes;
        _replies = new ReplyWriter(this, file, geometry, slot, waitMode);
    }

    public IReadOnlyList<int> PublisherIndexes { get; }

    internal RingGeometry Geometry { get; }

    internal int CursorSlot { get; }

    internal string Path => _mapping.Path;

    /// <summary>Maps a publisher's ring, validates it and requests a cursor; the publisher admits it before it next writes.</summary>
    public static ShmRingReceiver Attach(PublisherAddress publisher, SubscriberOptions options)
    {
        var mapping = RingMapping.Open(publisher.Address);
        try
        {
            var geometry = RingGeometry.Read(mapping.Base, mapping.Length, mapping.Path);
            if (geometry.MaxMessageBytes < options.MaxMessageBytes)
            {
                throw new InvalidDataException(
                    $"{mapping.Path} carries messages of up to {geometry.MaxMessageBytes} bytes; this subscriber expects {options.MaxMessageBytes}.");
            }

            byte* cursors = mapping.Base + geometry.CursorTableOffset;
            for (int slot = 0; slot < geometry.MaxSubscribers; slot++)
            {
                byte* record = cursors + (long)slot * CursorBytes;
                if (Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Claimed, CursorState.Free) != CursorState.Free)
                {
                    continue;
                }

                *(int*)(record + PidOffset) = Environment.ProcessId;
                *(int*)(record + SubscriberIndexOffset) = options.SubscriberIndex;
                *(long*)(record + ReplyWrittenOffset) = 0;
                *(long*)(record + ReplyReadOffset) = 0;
                Volatile.Write(ref *(long*)(record + HeartbeatOffset), Environment.TickCount64);
                Volatile.Write(ref *(int*)(record + StateOffset), CursorState.Requested);
                return new ShmRingReceiver(mapping, geometry, slot, publisher.PublisherIndex, options.WaitMode);
            }

            throw new IOException($"shm-ring {mapping.Path}: all {geometry.MaxSubscribers} subscriber slots are taken.");
        }
        catch
        {
            mapping.Dispose();
            throw;
        }
    }

    public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken) =>
        Receive(out message, out _, segmented: false, cancellationToken, Environment.CurrentManagedThreadId);

    /// <summary>Hands out chunk 0 of a chunked message in place; the rest comes through <see cref="TryReceiveNextSegment"/>.</summary>
    public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken) =>
        Receive(out segment, out messageLength, segmented: true, cancellationToken, Environment.CurrentManagedThreadId);

    /// <param name="self">The calling thread's managed id (the hot path reads it once, not per message).</param>
    private bool Receive(out ReadOnlySpan<byte> message, out int messageLength, bool segmented, CancellationToken cancellationToken, int self)
    {
        message = default;
        messageLength = 0;
        if (!Enter(self))
        {
            return false;
        }

        bool holding = false;
        try
        {
            if (!_admitted && !WaitForAdmission(cancellationToken))
            {
                return false;
            }

            while (true)
            {
                long sequence = _position;
                byte* slot = SlotAt(sequence);
                if (!IsPublished(slot, sequence) && !WaitForData(slot, sequence, cancellationToken))
                {
                    return false;
                }

                int length = *(int*)(slot + MessageLengthOffset);
                int chunkCount = *(int*)(slot + ChunkCountOffset);
                if (chunkCount == 1)
                {
                    if ((uint)length > (uint)_slotDataBytes || *(int*)(slot + ChunkLengthOffset) != length)
                    {
                        throw Corrupt(sequence, $"a single-slot message of {length} bytes; slots hold {_slotDataBytes}");
                    }

                    // Zero copy: the span is the slot. The publisher cannot reuse it until Release moves our cursor.
                    message = new ReadOnlySpan<byte>(slot + _slotHeaderBytes, length);
                    messageLength = length;
                    _pending = true;
                    _needsMessageStart = false;
                    holding = true;
                    return true;
                }

                if (*(int*)(slot + ChunkIndexOffset) != 0 && _needsMessageStart)
                {
                    // Admitted in the middle of a chunked message: skip its tail.
                    Advance(sequence + 1);
                    continue;
                }

                if (segmented)
                {
                    CheckChunk(sequence, slot, 0, length, chunkCount);
                    message = new ReadOnlySpan<byte>(slot + _slotHeaderBytes, _slotDataBytes);
                    messageLength = length;
                    _messageLength = length;
                    _chunkCount = chunkCount;
                    _chunkIndex = 0;
                    _segmented = true;
                    _pending = true;
                    _needsMessageStart = false;
                    holding = true;
                    return true;
                }

                switch (ReceiveChunks(length, chunkCount, cancellationToken))
                {
                    case ChunksResult.Complete:
                        message = new ReadOnlySpan<byte>(_reassembly, 0, length);
                        messageLength = length;
                        return true;
                    case ChunksResult.Abandoned:
                        continue;
                    default:
                        return false;
                }
            }
        }
        finally
        {
            if (!holding)
            {
                Exit();
            }
        }
    }

    /// <summary>
    /// Frees the chunk held (the publisher may reuse its slot from now on) and hands out the next one in place. False at
    /// the end of the message, and when it was cut short: closed or cancelled, or a chunk 0 where the next chunk was due
    /// (the publisher abandoned the message; that chunk 0 starts the next one and stays unread).
    /// </summary>
    public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken)
    {
        segment = default;
        if (!_segmented || _chunkIndex + 1 >= _chunkCount)
        {
            return false;
        }

        Advance(_position + 1);
        _chunkIndex++;
        long sequence = _position;
        byte* slot = SlotAt(sequence);
        if (!IsPublished(slot, sequence) && !WaitForData(slot, sequence, cancellationToken))
        {
            // Whatever comes next starts with a tail to skip.
            _needsMessageStart = true;
            EndSegments();
            return false;
        }

        if (*(int*)(slot + ChunkIndexOffset) == 0)
        {
            EndSegments();
            return false;
        }

        int length = CheckChunk(sequence, slot, _chunkIndex, _messageLength, _chunkCount);
        segment = new ReadOnlySpan<byte>(slot + _slotHeaderBytes, length);
        return true;
    }

    private void EndSegments()
    {
        _segmented = false;
        _pending = false;
    }

    /// <summary>Validates the slot header of chunk <paramref name="chunk"/> of a chunked message; returns its data length.</summary>
    private int CheckChunk(long sequence, byte* slot, int chunk, int total, int count)
    {
        if (chunk == 0 && (total <= _slotDataBytes || total > _maxMessageBytes || count != (total + _slotDataBytes - 1) / _slotDataBytes))
        {
            throw Corrupt(sequence, $"a message of {total} bytes in {count} chunks; slots hold {_slotDataBytes}, messages up to {_maxMessageBytes}");
        }

        int length = Math.Min(_slotDataBytes, total - (chunk * _slotDataBytes));
        if (*(int*)(slot + ChunkIndexOffset) != chunk || *(int*)(slot + ChunkCountOffset) != count
            || *(int*)(slot + MessageLengthOffset) != total || *(int*)(slot + ChunkLengthOffset) != length)
        {
            throw Corrupt(sequence, $"chunk {*(int*)(slot + ChunkIndexOffset)}/{*(int*)(slot + ChunkCountOffset)} where chunk {chunk}/{count} of a {total}-byte message was due");
        }

        return length;
    }

    private enum ChunksResult
    {
        Complete,
        Closed,
        Abandoned,
    }

    /// <summary>
    /// Copies the chunks of one message into the reassembly buffer, freeing each slot as soon as it is copied.
    /// A chunk 0 always starts a new message: met in the middle of one, it means the publisher abandoned the message it
    /// was sending (its Send threw, e.g. on evicting a dead subscriber), so the partial one is dropped.
    /// </summary>
    private ChunksResult ReceiveChunks(int total, int count, CancellationToken cancellationToken)
    {
        // Chunk 0's header (message length and chunk count) is checked by CheckChunk before anything is copied.
        _reassembly ??= GC.AllocateUninitializedArray<byte>(_maxMessageBytes, pinned: true);
        var buffer = new Span<byte>(_reassembly);
        for (int chunk = 0, offset = 0; chunk < count; chunk++, offset += _slotDataBytes)
        {
            long sequence = _position;
            byte* slot = SlotAt(sequence);
            if (!IsPublished(slot, sequence) && !WaitForData(slot, sequence, cancellationToken))
            {
                // Closed or cancelled mid-message: whatever comes next starts with a tail to skip.
                _needsMessageStart = true;
                return ChunksResult.Closed;
            }

            if (chunk > 0 && *(int*)(slot + ChunkIndexOffset) == 0)
            {
                return ChunksResult.Abandoned;
            }

            int length = CheckChunk(sequence, slot, chunk, total, count);
            new ReadOnlySpan<byte>(slot + _slotHeaderBytes, length).CopyTo(buffer.Slice(offset, length));
            Advance(sequence + 1);
        }

        _needsMessageStart = false;
        return ChunksResult.Complete;
    }

    public void Release()
    {
        if (_pending)
        {
            _pending = false;
            Advance(_position + 1);
        }

        _segmented = false;

        Exit();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Advance(long next)
    {
        _position = next;

        // The cursor's cache line is one the publisher polls when the ring is full: written for every message, it would
        // cross between the cores for every message. So it is published an eighth of the ring at a time, and whenever
        // this receiver has caught up (WaitForData), which is also what every wait of the publisher needs.
        if (next - _cursorShared >= _cursorBatch)
        {
            PublishCursor(next);
        }

        if ((++_released & 1023) == 0)
        {
            Volatile.Write(ref *_heartbeat, Environment.TickCount64);
        }
    }

    private void PublishCursor(long cursor)
    {
        _cursorShared = cursor;

        // Release: our reads of the slots before it are done before the publisher can see them free.
        Volatile.Write(ref *_cursor, cursor);
        if (_block)
        {
            WakePublisherForSpace(cursor);
        }
    }

    private void WakePublisherForSpace(long cursor)
    {
        // Full fence between our cursor store and the load of the publisher's flag (Dekker with its WaitForSpace).
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref *_waitingForSpace) != 0 && cursor >= Volatile.Read(ref *_wakeAt))
        {
            Interlocked.Increment(ref *_publisherSignal);
            LinuxNative.FutexWake(_publisherSignal, 1);
        }
    }

    /// <summary>Echoes in a round trip (between a receive and its Release, so inside the mapping).</summary>
    public void Reply(ReadOnlySpan<byte> message) => _replies.Write(message);

    private bool WaitForAdmission(CancellationToken cancellationToken)
    {
        while (true)
        {
            int state = Volatile.Read(ref *_state);
            if (state == CursorState.Active)
            {
                _position = Volatile.Read(ref *_cursor);
                _cursorShared = _position;
                _admitted = true;
                _needsMessageStart = true;
                return true;
            }

            if (state == CursorState.Evicted)
            {
                throw new IOException($"shm-ring {Path}: the publisher refused or evicted this subscriber.");
            }

            if (Volatile.Read(ref *_closed) != 0 || _closing || cancellationToken.IsCancellationRequested || !CheckLivenessIfDue())
            {
                return false;
            }

            if (_block)
            {
                SleepOnData(null, -1);
            }
            else
            {
                Idle.Pause(_waitMode);
            }
        }
    }

    /// <summary>
    /// Whether the slot holds <paramref name="sequence"/>, published: its sequence word (acquire) reads sequence + 1.
    /// Older laps read less, and the publisher cannot lap an admitted cursor, so equality is the whole test.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsPublished(byte* slot, long sequence) => Volatile.Read(ref *(long*)(slot + SlotSequenceOffset)) == sequence + 1;

    /// <summary>Waits until the publisher has published <paramref name="sequence"/> in <paramref name="slot"/>. False when closed (and drained) or cancelled.</summary>
    private bool WaitForData(byte* slot, long sequence, CancellationToken cancellationToken)
    {
        // Caught up: the cursor goes out now, so a publisher that waits for space (held chunks of a message that fits
        // the ring) never waits for a cursor it cannot see.
        if (_cursorShared != _position)
        {
            PublishCursor(_position);
        }

        while (true)
        {
            if (Volatile.Read(ref *_closed) != 0)
            {
                // Closed after its last publish: anything still unread is delivered first.
                return IsPublished(slot, sequence);
            }

            if (_closing || cancellationToken.IsCancellationRequested || !CheckLivenessIfDue())
            {
                return false;
            }

            if (_block)
            {
                SleepOnData(slot, sequence);
            }
            else
            {
                Idle.Pause(_waitMode);
            }

            if (IsPublished(slot, sequence))
            {
                return true;
            }
        }
    }

    /// <summary>
    /// One futex sleep on the publisher's data signal, announced through the waiter count so the publisher wakes us;
    /// waits for <paramref name="sequence"/> to be published in <paramref name="slot"/>, or (slot null) to be admitted.
    /// The futex word is read before the announcement: see the publisher's WakeReaders for why no wake-up is lost.
    /// </summary>
    private void SleepOnData(byte* slot, long sequence)
    {
        int observed = Volatile.Read(ref *_dataSignal);
        Interlocked.Increment(ref *_dataWaiters);
        bool nothingNew = slot == null
            ? Volatile.Read(ref *_state) != CursorState.Active
            : !IsPublished(slot, sequence);
        Sleeps++;
        if (nothingNew && Volatile.Read(ref *_closed) == 0 && !_closing
            && !LinuxNative.FutexWait(_dataSignal, observed, LivenessIntervalMs) && slot != null && IsPublished(slot, sequence))
        {
            // The liveness timeout ended a sleep whose data had come: the publisher's wake-up was lost.
            MissedWakeups++;
        }

        Interlocked.Decrement(ref *_dataWaiters);
    }

    /// <summary>Times this receiver announced a sleep (a test's evidence that the BLOCK path really ran).</summary>
    internal long Sleeps { get; private set; }

    /// <summary>Sleeps that ran out their timeout although the data they waited for had been published.</summary>
    internal long MissedWakeups { get; private set; }

    /// <summary>
    /// While waiting, at most every <see cref="LivenessIntervalMs"/>: writes the heartbeat, notices an eviction, checks the
    /// publisher's process (kill(pid, 0) only: no allocation). False: the publisher is dead.
    /// </summary>
    internal bool CheckLivenessIfDue()
    {
        long now = Environment.TickCount64;
        if (now - _lastHeartbeatMs < LivenessIntervalMs)
        {
            return true;
        }

        _lastHeartbeatMs = now;
        Volatile.Write(ref *_heartbeat, now);
        if (_admitted && Volatile.Read(ref *_state) == CursorState.Evicted)
        {
            throw new IOException($"shm-ring {Path}: the publisher evicted this subscriber (it considered it dead or stalled).");
        }

        return _publisherPid == _ownPid || _publisherPid <= 0 || ProcessInstance.IsRunning(_publisherPid);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* SlotAt(long sequence) => _slots + (long)(int)(sequence & _slotMask) * _slotBytes;

    private InvalidDataException Corrupt(long sequence, string what) =>
        new($"shm-ring {Path}: slot of sequence {sequence} holds {what}; the ring is corrupt or not written by a compatible publisher.");

    /// <summary>Test hook: whether a received span lies in the shared mapping (zero copy) rather than in a private buffer.</summary>
    internal bool IsInSharedMemory(ReadOnlySpan<byte> span)
    {
        fixed (byte* pointer = span)
        {
            return pointer >= _mapping.Base && pointer + span.Length <= _mapping.Base + _mapping.Length;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool Enter(int self)
    {
        Volatile.Write(ref _inside, self);
        if (_closing)
        {
            Volatile.Write(ref _inside, 0);
            return false;
        }

        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Exit() => Volatile.Write(ref _inside, 0);

    internal bool IsClosing => _closing;

    internal int PublisherPid => _publisherPid;

    internal void BeginClose() => _closing = true;

    /// <summary>Changes the futex word a blocked TryReceive sleeps on and wakes it; it then sees <see cref="_closing"/>.</summary>
    internal void WakeSelf()
    {
        Interlocked.Increment(ref *_dataSignal);
        LinuxNative.FutexWake(_dataSignal, int.MaxValue);
    }

    internal void Finish()
    {
        bool quiet = Quiescence.WaitUntilOutside(ref _inside, TimeSpan.FromSeconds(2));

        // Detached: the publisher no longer waits for this cursor (and reports it if it was still sending).
        Interlocked.Exchange(ref *_state, CursorState.Detached);
        Interlocked.Increment(ref *_publisherSignal);
        LinuxNative.FutexWake(_publisherSignal, 1);
        if (quiet)
        {
            _mapping.Dispose();
        }
    }

    public void Run(IReceiverLoop loop) => loop.Run(new HotPath(this, Environment.CurrentManagedThreadId));

    /// <summary>The static-dispatch adapter (see <see cref="IReceiverPath"/>): chunks read in place; carries the loop thread's id.</summary>
    private readonly struct HotPath(ShmRingReceiver receiver, int self) : IReceiverPath
    {
        public bool Segmented => true;

        public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken) =>
            receiver.Receive(out segment, out messageLength, segmented: true, cancellationToken, self);

        public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken) =>
            receiver.TryReceiveNextSegment(out segment, cancellationToken);

        public void Reply(ReadOnlySpan<byte> message) => receiver.Reply(message);

        public void Release() => receiver.Release();
    }
}
