using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using static IpcBench.Transports.SharedMemory.RingLayout;

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// Creates and owns one ring file and writes it. Single writer: used by one thread at a time (the contract of
/// <see cref="IPublisherEndpoint"/>); only <see cref="Dispose"/> may come from another thread.
/// </summary>
[SupportedOSPlatform("linux")]
internal sealed unsafe class ShmRingPublisher : IPublisherEndpoint
{
    /// <summary>Futex waits time out after this, so liveness checks run even when nobody wakes us.</summary>
    internal const int LivenessIntervalMs = 100;

    private readonly RingMapping _mapping;
    private readonly int _publisherIndex;
    private readonly WaitMode _waitMode;
    private readonly bool _block;
    private readonly long _stallMs;
    private readonly int _ownPid = Environment.ProcessId;

    private readonly byte* _slots;
    private readonly byte* _cursors;
    private readonly byte* _replies;
    private readonly long* _published;
    private readonly int* _dataSignal;
    private readonly int* _dataWaiters;
    private readonly int* _closed;
    private readonly int* _waitingForSpace;
    private readonly int* _waitingForReply;
    private readonly long* _wakeAt;
    private readonly int* _publisherSignal;
    private readonly int _slotCount;
    private readonly int _slotMask;
    private readonly int _slotBytes;
    private readonly int _slotDataBytes;
    private readonly int _maxSubscribers;
    private readonly int _maxMessageBytes;

    /// <summary>
    /// Only for <see cref="Loan"/> of a chunked message, whose caller wants contiguous bytes: composed here, copied into
    /// slots by <see cref="Send"/>. Allocated on first use; the segmented loan writes chunks in place and never needs it.
    /// </summary>
    private byte[]? _staging;

    private readonly bool[] _tracked;
    private readonly long[] _lastCursor;
    private readonly long[] _lastProgressMs;
    private readonly long[] _replyRead;
    private int[] _replyOrder = [];
    private int _nextReply;
    private int _replyHeld = -1;

    private long _next;
    private long _gateLimit;
    private int _loanLength;
    private byte* _loanSlot;
    private bool _loaned;

    /// <summary>A segmented loan of a chunked message: chunk <see cref="_chunkIndex"/> of <see cref="_chunkCount"/> is loaned.</summary>
    private bool _segmented;
    private int _chunkIndex;
    private int _chunkCount;

    /// <summary>
    /// The chunks of the current segmented loan are all published by Send, with one release store, rather than one by
    /// one: the writer may then write chunk 0 (the header) last. Possible when the message fits the ring.
    /// </summary>
    private bool _holdChunks;

    /// <summary>Managed thread id of whoever is inside the mapping (0: nobody); lets Dispose unmap only when it is safe.</summary>
    private int _inside;

    private volatile bool _closing;
    private int _disposed;

    public ShmRingPublisher(string path, PublisherOptions options, ShmRingSettings settings)
    {
        var geometry = RingGeometry.Compute(options.MaxMessageBytes, Math.Max(options.ExpectedSubscribers, options.TotalSubscribers), settings);
        Geometry = geometry;
        _publisherIndex = options.PublisherIndex;
        _waitMode = options.WaitMode;
        _block = options.WaitMode == WaitMode.Block;
        _stallMs = (long)settings.StallTimeout.TotalMilliseconds;
        _mapping = RingMapping.Create(path, geometry.FileBytes);

        byte* file = _mapping.Base;
        _slots = file + geometry.SlotsOffset;
        _cursors = file + geometry.CursorTableOffset;
        _replies = file + geometry.ReplyAreaOffset;
        _published = (long*)(file + PublishedOffset);
        _dataSignal = (int*)(file + DataSignalOffset);
        _dataWaiters = (int*)(file + DataWaitersOffset);
        _closed = (int*)(file + ClosedOffset);
        _waitingForSpace = (int*)(file + WaitingForSpaceOffset);
        _waitingForReply = (int*)(file + WaitingForReplyOffset);
        _wakeAt = (long*)(file + WakeAtOffset);
        _publisherSignal = (int*)(file + PublisherSignalOffset);
        _slotCount = geometry.SlotCount;
        _slotMask = geometry.SlotCount - 1;
        _slotBytes = geometry.SlotBytes;
        _slotDataBytes = geometry.SlotDataBytes;
        _maxSubscribers = geometry.MaxSubscribers;
        _maxMessageBytes = geometry.MaxMessageBytes;
        _tracked = new bool[_maxSubscribers];
        _lastCursor = new long[_maxSubscribers];
        _lastProgressMs = new long[_maxSubscribers];
        _replyRead = new long[_maxSubscribers];

        // A fresh file is all zeros: every cursor record is Free, nothing is published. The header goes last.
        geometry.Write(file, _ownPid, options.PublisherIndex, options.WaitMode);
    }

    public string Address => _mapping.Path;

    internal RingGeometry Geometry { get; }

    /// <summary>Slots published so far (a chunked message counts one per chunk).</summary>
    internal long Published => _next;

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (true)
        {
            int active = 0;
            Enter();
            try
            {
                ScanMinCursor();
                for (int i = 0; i < _maxSubscribers; i++)
                {
                    if (_tracked[i])
                    {
                        active++;
                    }
                }

                if (active >= count)
                {
                    _replyOrder = TrackedSlots();
                    _nextReply = 0;
                    return;
                }
            }
            finally
            {
                Exit();
            }

            cancellationToken.ThrowIfCancellationRequested();
            if (Environment.TickCount64 >= deadline)
            {
                throw new TimeoutException($"Only {active} of {count} subscribers attached to {Address} within {timeout.TotalSeconds:0.#} s.");
            }

            Thread.Sleep(1);
        }
    }

    public Span<byte> Loan(int length)
    {
        if ((uint)length > (uint)_maxMessageBytes)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, $"shm-ring {Address} carries messages of up to {_maxMessageBytes} bytes.");
        }

        Enter();
        _loanLength = length;
        _loaned = true;
        if (length <= _slotDataBytes)
        {
            long sequence = _next;
            if (sequence >= _gateLimit)
            {
                try
                {
                    WaitForSpace(sequence);
                }
                catch
                {
                    _loaned = false;
                    Exit();
                    throw;
                }
            }

            // Zero copy: the caller writes straight into the slot.
            _loanSlot = SlotAt(sequence);
            return new Span<byte>(_loanSlot + SlotHeaderBytes, length);
        }

        _loanSlot = null;
        _staging ??= GC.AllocateUninitializedArray<byte>(_maxMessageBytes, pinned: true);
        return new Span<byte>(_staging, 0, length);
    }

    /// <summary>A message that fits a slot is one segment, as with <see cref="Loan"/>; a larger one is loaned chunk by chunk, in its slots.</summary>
    public Span<byte> LoanFirstSegment(int length)
    {
        if (length <= _slotDataBytes || length > _maxMessageBytes)
        {
            // One slot (zero copy already), or too large (Loan throws the error).
            return Loan(length);
        }

        Enter();
        _loanLength = length;
        _loaned = true;
        _segmented = true;
        _chunkIndex = 0;
        _chunkCount = (length + _slotDataBytes - 1) / _slotDataBytes;
        _holdChunks = _chunkCount <= _slotCount;
        return LoanChunk();
    }

    public bool FirstSegmentWritableUntilSend => !_segmented || _holdChunks;

    /// <summary>
    /// Completes the chunk just written and loans the next. A message larger than the ring has each chunk published at
    /// once, so subscribers free its slot while we write the next; a smaller one is published whole by Send.
    /// </summary>
    public Span<byte> LoanNextSegment()
    {
        if (!_loaned)
        {
            throw new InvalidOperationException("LoanNextSegment without LoanFirstSegment.");
        }

        if (!_segmented || _chunkIndex + 1 == _chunkCount)
        {
            // The last (or only) piece is published by Send.
            return [];
        }

        WriteSlotHeader(_loanSlot, _loanLength, _slotDataBytes, _chunkIndex, _chunkCount);
        if (!_holdChunks)
        {
            Publish(_next + 1);
        }

        _chunkIndex++;
        return LoanChunk();
    }

    private Span<byte> LoanChunk()
    {
        long sequence = _holdChunks ? _next + _chunkIndex : _next;
        if (sequence >= _gateLimit)
        {
            try
            {
                WaitForSpace(sequence);
            }
            catch
            {
                // Chunks already published stay a partial message; readers drop it when the next chunk 0 comes. Held
                // chunks were never published: nobody saw them.
                EndLoan();
                throw;
            }
        }

        _loanSlot = SlotAt(sequence);
        return new Span<byte>(_loanSlot + SlotHeaderBytes, Math.Min(_slotDataBytes, _loanLength - (_chunkIndex * _slotDataBytes)));
    }

    private void EndLoan()
    {
        _loaned = false;
        _segmented = false;
        _holdChunks = false;
        _loanSlot = null;
        Exit();
    }

    public void Send()
    {
        if (!_loaned)
        {
            throw new InvalidOperationException("Send without Loan.");
        }

        try
        {
            byte* slot = _loanSlot;
            if (_segmented)
            {
                if (_chunkIndex + 1 != _chunkCount)
                {
                    throw new InvalidOperationException($"Send after {_chunkIndex + 1} of {_chunkCount} segments: loan them all with LoanNextSegment first.");
                }

                WriteSlotHeader(slot, _loanLength, _loanLength - (_chunkIndex * _slotDataBytes), _chunkIndex, _chunkCount);
                Publish(_next + (_holdChunks ? _chunkCount : 1));
            }
            else if (slot != null)
            {
                WriteSlotHeader(slot, _loanLength, _loanLength, 0, 1);
                Publish(_next + 1);
            }
            else
            {
                SendChunks(new ReadOnlySpan<byte>(_staging, 0, _loanLength));
            }
        }
        finally
        {
            EndLoan();
        }
    }

    private void SendChunks(ReadOnlySpan<byte> message)
    {
        int total = message.Length;
        int count = (total + _slotDataBytes - 1) / _slotDataBytes;
        for (int chunk = 0, offset = 0; chunk < count; chunk++, offset += _slotDataBytes)
        {
            long sequence = _next;
            if (sequence >= _gateLimit)
            {
                WaitForSpace(sequence);
            }

            byte* slot = SlotAt(sequence);
            int length = Math.Min(_slotDataBytes, total - offset);
            message.Slice(offset, length).CopyTo(new Span<byte>(slot + SlotHeaderBytes, length));
            WriteSlotHeader(slot, total, length, chunk, count);

            // Each chunk is published on its own, so subscribers copy chunk k while we write chunk k+1.
            Publish(sequence + 1);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteSlotHeader(byte* slot, int messageLength, int chunkLength, int chunkIndex, int chunkCount)
    {
        *(int*)(slot + MessageLengthOffset) = messageLength;
        *(int*)(slot + ChunkLengthOffset) = chunkLength;
        *(int*)(slot + ChunkIndexOffset) = chunkIndex;
        *(int*)(slot + ChunkCountOffset) = chunkCount;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Publish(long next)
    {
        _next = next;

        // Release: the slot's contents are visible to whoever sees the new count.
        Volatile.Write(ref *_published, next);
        if (_block)
        {
            WakeReaders();
        }
    }

    private void WakeReaders()
    {
        // The increment changes the futex word (a reader about to sleep on the old value returns at once) and is a full
        // fence, so either we see the reader's waiter count or the reader sees our new count: no lost wake-up.
        Interlocked.Increment(ref *_dataSignal);
        if (Volatile.Read(ref *_dataWaiters) != 0)
        {
            LinuxNative.FutexWake(_dataSignal, int.MaxValue);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* SlotAt(long sequence) => _slots + (long)(int)(sequence & _slotMask) * _slotBytes;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* CursorRecord(int slot) => _cursors + (long)slot * CursorBytes;

    /// <summary>Waits until every live subscriber has read the message that last used the slot of <paramref name="sequence"/>.</summary>
    private void WaitForSpace(long sequence)
    {
        // The slowest cursor must be past sequence - slotCount, the previous occupant of the slot.
        long needed = sequence - _slotCount + 1;
        long started = Environment.TickCount64;
        long lastCheck = started;
        while (true)
        {
            long min = ScanMinCursor();
            if (min >= needed)
            {
                _gateLimit = min + _slotCount;
                return;
            }

            if (_closing)
            {
                throw Disposed();
            }

            long now = Environment.TickCount64;
            if (now - lastCheck >= LivenessIntervalMs)
            {
                lastCheck = now;
                CheckSubscribers(needed, now, now - started, forReply: -1);
            }

            if (_block)
            {
                int observed = Volatile.Read(ref *_publisherSignal);

                // Wake me once a quarter of the ring is free, not at every slot: fewer futex round trips when saturated.
                // Capped at what is published: a subscriber that has read everything must count as worth waking for.
                Volatile.Write(ref *_wakeAt, Math.Min(needed + _slotCount / 4, _next));
                Interlocked.Exchange(ref *_waitingForSpace, 1);
                if (ScanMinCursor() < needed && !_closing)
                {
                    LinuxNative.FutexWait(_publisherSignal, observed, LivenessIntervalMs);
                }

                Volatile.Write(ref *_waitingForSpace, 0);
            }
            else
            {
                Idle.Pause(_waitMode);
            }
        }
    }

    /// <summary>The lowest cursor among active subscribers (our own next sequence when there are none). Admits new subscribers.</summary>
    private long ScanMinCursor()
    {
        long min = _next;
        byte* record = _cursors;
        for (int i = 0; i < _maxSubscribers; i++, record += CursorBytes)
        {
            int state = Volatile.Read(ref *(int*)(record + StateOffset));
            if (state == CursorState.Active)
            {
                long cursor = Volatile.Read(ref *(long*)(record + CursorOffset));
                if (cursor < min)
                {
                    min = cursor;
                }
            }
            else if (state == CursorState.Requested)
            {
                Admit(i, record);
            }
            else if (state is CursorState.Detached && _tracked[i])
            {
                _tracked[i] = false;
                throw new IOException(
                    $"shm-ring {Address}: subscriber {SubscriberIndex(record)} (pid {Pid(record)}) detached while publisher {_publisherIndex} was still sending.");
            }
        }

        return min;
    }

    /// <summary>
    /// The publisher, being the only writer, places a new subscriber's cursor at the next sequence it will write; the
    /// subscriber receives everything published from then on. Doing it here rather than in the subscriber removes the
    /// race of a joiner reading the sequence while the publisher laps it.
    /// </summary>
    private void Admit(int slot, byte* record)
    {
        int pid = Pid(record);
        if (pid != _ownPid && pid > 0 && !ProcessInstance.IsRunning(pid))
        {
            Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Evicted, CursorState.Requested);
            return;
        }

        Volatile.Write(ref *(long*)(record + CursorOffset), _next);
        if (Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Active, CursorState.Requested) == CursorState.Requested)
        {
            _tracked[slot] = true;
            _lastCursor[slot] = _next;
            _lastProgressMs[slot] = Environment.TickCount64;
            _replyRead[slot] = Volatile.Read(ref *(long*)(record + ReplyReadOffset));
            if (_block)
            {
                // It may already sleep in TryReceive, waiting to be admitted.
                WakeReaders();
            }
        }
    }

    /// <summary>
    /// Runs every <see cref="LivenessIntervalMs"/> while the publisher waits. Evicts and reports a subscriber that holds it
    /// up and is dead (its pid is gone) or stalled (neither its cursor nor its heartbeat moved for the stall timeout).
    /// </summary>
    private void CheckSubscribers(long needed, long nowMs, long waitedMs, int forReply)
    {
        byte* record = _cursors;
        for (int i = 0; i < _maxSubscribers; i++, record += CursorBytes)
        {
            if (!_tracked[i] || (forReply >= 0 && i != forReply))
            {
                continue;
            }

            if (Volatile.Read(ref *(int*)(record + StateOffset)) != CursorState.Active)
            {
                continue;
            }

            long cursor = Volatile.Read(ref *(long*)(record + CursorOffset));
            if (cursor != _lastCursor[i])
            {
                _lastCursor[i] = cursor;
                _lastProgressMs[i] = nowMs;
            }

            if (forReply < 0 && cursor >= needed)
            {
                continue;
            }

            int pid = Pid(record);
            string what = forReply >= 0 ? "its echo" : $"it to free ring space ({_next - cursor} slots unread)";
            if (pid != _ownPid && pid > 0 && !ProcessInstance.IsRunning(pid))
            {
                Evict(i, record, $"subscriber {SubscriberIndex(record)} (pid {pid}) died: the process no longer exists. Publisher {_publisherIndex} waited {waitedMs} ms for {what}; its cursor was evicted.");
            }

            long heartbeat = Volatile.Read(ref *(long*)(record + HeartbeatOffset));
            if (nowMs - _lastProgressMs[i] > _stallMs && nowMs - heartbeat > _stallMs)
            {
                Evict(i, record, $"subscriber {SubscriberIndex(record)} (pid {pid}) stalled: its cursor and heartbeat stood still for {(nowMs - heartbeat) / 1000.0:0.#} s while publisher {_publisherIndex} waited for {what}; its cursor was evicted.");
            }
        }
    }

    private void Evict(int slot, byte* record, string reason)
    {
        Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Evicted, CursorState.Active);
        _tracked[slot] = false;
        _gateLimit = 0;
        throw new IOException($"shm-ring {Address}: {reason}");
    }

    private static int Pid(byte* record) => Volatile.Read(ref *(int*)(record + PidOffset));

    private static int SubscriberIndex(byte* record) => Volatile.Read(ref *(int*)(record + SubscriberIndexOffset));

    private int[] TrackedSlots()
    {
        var slots = new List<int>();
        for (int i = 0; i < _maxSubscribers; i++)
        {
            if (_tracked[i])
            {
                slots.Add(i);
            }
        }

        return [.. slots];
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        reply = default;
        Enter();
        bool holding = false;
        try
        {
            if (_replyOrder.Length == 0)
            {
                ScanMinCursor();
                _replyOrder = TrackedSlots();
                if (_replyOrder.Length == 0)
                {
                    return false;
                }
            }

            // Every subscriber echoes every message once and in order, so taking them in turn sees each echo.
            int slot = _replyOrder[_nextReply];
            _nextReply = _nextReply + 1 == _replyOrder.Length ? 0 : _nextReply + 1;
            byte* record = CursorRecord(slot);
            long read = _replyRead[slot];
            if (Volatile.Read(ref *(long*)(record + ReplyWrittenOffset)) <= read && !WaitForReply(slot, record, read, cancellationToken))
            {
                return false;
            }

            byte* entry = _replies + (long)slot * RingGeometry.ReplyRingBytes + (read & (ReplySlotCount - 1)) * ReplySlotBytes;
            int length = *(int*)entry;
            if ((uint)length > ReplySlotBytes - ReplyHeaderBytes)
            {
                throw new InvalidDataException($"shm-ring {Address}: reply ring of subscriber {SubscriberIndex(record)} holds an entry of {length} bytes.");
            }

            reply = new ReadOnlySpan<byte>(entry + ReplyHeaderBytes, length);
            _replyHeld = slot;
            holding = true;
            return true;
        }
        finally
        {
            if (!holding)
            {
                Exit();
            }
        }
    }

    public void ReleaseReply()
    {
        int slot = _replyHeld;
        if (slot >= 0)
        {
            _replyHeld = -1;
            long read = ++_replyRead[slot];
            Volatile.Write(ref *(long*)(CursorRecord(slot) + ReplyReadOffset), read);
        }

        Exit();
    }

    private bool WaitForReply(int slot, byte* record, long read, CancellationToken cancellationToken)
    {
        long* written = (long*)(record + ReplyWrittenOffset);
        long started = Environment.TickCount64;
        long lastCheck = started;
        while (Volatile.Read(ref *written) <= read)
        {
            if (_closing || cancellationToken.IsCancellationRequested)
            {
                return false;
            }

            long now = Environment.TickCount64;
            if (now - lastCheck >= LivenessIntervalMs)
            {
                lastCheck = now;
                if (Volatile.Read(ref *(int*)(record + StateOffset)) != CursorState.Active)
                {
                    // Detached or evicted: that link is closed.
                    _tracked[slot] = false;
                    return false;
                }

                CheckSubscribers(long.MaxValue, now, now - started, forReply: slot);
            }

            if (_block)
            {
                int observed = Volatile.Read(ref *_publisherSignal);
                Interlocked.Exchange(ref *_waitingForReply, 1);
                if (Volatile.Read(ref *written) <= read && !_closing)
                {
                    LinuxNative.FutexWait(_publisherSignal, observed, LivenessIntervalMs);
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

    /// <summary>Test hook: registers <paramref name="pid"/> as an active subscriber that never reads, as a real one that got stuck would.</summary>
    internal int AddSubscriberForTest(int pid, int subscriberIndex)
    {
        for (int i = 0; i < _maxSubscribers; i++)
        {
            byte* record = CursorRecord(i);
            if (Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Claimed, CursorState.Free) == CursorState.Free)
            {
                *(int*)(record + PidOffset) = pid;
                *(int*)(record + SubscriberIndexOffset) = subscriberIndex;
                Volatile.Write(ref *(long*)(record + HeartbeatOffset), Environment.TickCount64);
                Volatile.Write(ref *(int*)(record + StateOffset), CursorState.Requested);
                Admit(i, record);
                _gateLimit = 0;
                return i;
            }
        }

        throw new InvalidOperationException("No free subscriber slot.");
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Enter()
    {
        Volatile.Write(ref _inside, Environment.CurrentManagedThreadId);
        if (_closing)
        {
            Volatile.Write(ref _inside, 0);
            throw Disposed();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Exit() => Volatile.Write(ref _inside, 0);

    private ObjectDisposedException Disposed() => new(nameof(ShmRingPublisher), $"The shm-ring publisher {Address} was disposed.");

    /// <summary>
    /// Marks the ring closed (receivers drain what is left, then end), wakes every sleeper, removes the file, and unmaps
    /// once no thread is inside the mapping. May be called from another thread while Send is blocked.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _closing = true;

        // Asymmetric Dekker with Enter(): after this, a thread either is visibly inside or will see _closing.
        Interlocked.MemoryBarrierProcessWide();
        Volatile.Write(ref *_closed, 1);
        Interlocked.Increment(ref *_dataSignal);
        LinuxNative.FutexWake(_dataSignal, int.MaxValue);
        Interlocked.Increment(ref *_publisherSignal);
        LinuxNative.FutexWake(_publisherSignal, int.MaxValue);

        bool quiet = Quiescence.WaitUntilOutside(ref _inside, TimeSpan.FromSeconds(2));
        try
        {
            File.Delete(Address);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Left for RemoveStaleResources.
        }

        if (quiet)
        {
            _mapping.Dispose();
        }

        // Otherwise a thread is stuck inside: leaking the mapping beats pulling it from under that thread.
    }

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IPublisherPath"/>): messages in chunks, written in place.</summary>
    private readonly struct HotPath(ShmRingPublisher endpoint) : IPublisherPath
    {
        public bool Segmented => true;

        public bool FirstSegmentWritableUntilSend => endpoint.FirstSegmentWritableUntilSend;

        public Span<byte> LoanFirstSegment(int length) => endpoint.LoanFirstSegment(length);

        public Span<byte> LoanNextSegment() => endpoint.LoanNextSegment();

        public void Send() => endpoint.Send();

        public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) =>
            endpoint.TryReceiveReply(out reply, cancellationToken);

        public void ReleaseReply() => endpoint.ReleaseReply();
    }
}

internal static class Quiescence
{
    /// <summary>Waits until <paramref name="inside"/> is 0 or names the calling thread.</summary>
    public static bool WaitUntilOutside(ref int inside, TimeSpan timeout)
    {
        int self = Environment.CurrentManagedThreadId;
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        var spinner = new SpinWait();
        while (true)
        {
            int owner = Volatile.Read(ref inside);
            if (owner == 0 || owner == self)
            {
                return true;
            }

            if (Environment.TickCount64 >= deadline)
            {
                return false;
            }

            spinner.SpinOnce(sleep1Threshold: 20);
        }
    }
}
