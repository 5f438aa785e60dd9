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

    private readonly byte* _slots;
    private readonly int* _dataSignal;
    private readonly int* _dataWaiters;
    private readonly int* _closed;
    private readonly int* _waitingForSpace;
    private readonly long* _wakeAt;
    private readonly int* _publisherSignal;
    private readonly int _slotCount;
    private readonly int _slotMask;
    private readonly int _slotBytes;
    private readonly int _slotDataBytes;
    private readonly int _slotHeaderBytes;
    private readonly int _maxMessageBytes;

    /// <summary>
    /// Only for <see cref="Loan"/> of a chunked message, whose caller wants contiguous bytes: composed here, copied into
    /// slots by <see cref="Send"/>. Allocated on first use; the segmented loan writes chunks in place and never needs it.
    /// </summary>
    private byte[]? _staging;

    private readonly SubscriberCursors _subscribers;
    private readonly ReplyReader _replies;

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
    /// The chunks of the current segmented loan are all published by Send (their sequence words, chunk 0's last) rather
    /// than one by one: the writer may then write chunk 0 (the header) last. Possible when the message fits the ring.
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
        _dataSignal = (int*)(file + DataSignalOffset);
        _dataWaiters = (int*)(file + DataWaitersOffset);
        _closed = (int*)(file + ClosedOffset);
        _waitingForSpace = (int*)(file + WaitingForSpaceOffset);
        _wakeAt = (long*)(file + WakeAtOffset);
        _publisherSignal = (int*)(file + PublisherSignalOffset);
        _slotCount = geometry.SlotCount;
        _slotMask = geometry.SlotCount - 1;
        _slotBytes = geometry.SlotBytes;
        _slotDataBytes = geometry.SlotDataBytes;
        _slotHeaderBytes = geometry.SlotHeaderBytes;
        _maxMessageBytes = geometry.MaxMessageBytes;
        _subscribers = new SubscriberCursors(file + geometry.CursorTableOffset, geometry.MaxSubscribers, options.PublisherIndex, _stallMs, path);
        _replies = new ReplyReader(this, _subscribers, file, geometry, options.WaitMode);

        // A fresh file is all zeros: every cursor record is Free, nothing is published. The header goes last.
        geometry.Write(file, Environment.ProcessId, options.PublisherIndex, options.WaitMode);
    }

    public string Address => _mapping.Path;

    internal RingGeometry Geometry { get; }

    /// <summary>Slots published so far (a chunked message counts one per chunk).</summary>
    internal long Published => _next;

    internal bool IsClosing => _closing;

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (true)
        {
            int active = 0;
            Enter(Environment.CurrentManagedThreadId);
            try
            {
                ScanCursors();
                active = _subscribers.TrackedCount;
                if (active >= count)
                {
                    _replies.Restart();
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

    public Span<byte> Loan(int length) => Loan(length, Environment.CurrentManagedThreadId);

    /// <summary><see cref="Loan(int)"/> for a caller that knows its managed thread id (the hot path reads it once, not per message).</summary>
    private Span<byte> Loan(int length, int self)
    {
        if ((uint)length > (uint)_maxMessageBytes)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, $"shm-ring {Address} carries messages of up to {_maxMessageBytes} bytes.");
        }

        Enter(self);
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
            return new Span<byte>(_loanSlot + _slotHeaderBytes, length);
        }

        _loanSlot = null;
        _staging ??= GC.AllocateUninitializedArray<byte>(_maxMessageBytes, pinned: true);
        return new Span<byte>(_staging, 0, length);
    }

    /// <summary>A message that fits a slot is one segment, as with <see cref="Loan"/>; a larger one is loaned chunk by chunk, in its slots.</summary>
    public Span<byte> LoanFirstSegment(int length) => LoanFirstSegment(length, Environment.CurrentManagedThreadId);

    private Span<byte> LoanFirstSegment(int length, int self)
    {
        if (length <= _slotDataBytes || length > _maxMessageBytes)
        {
            // One slot (zero copy already), or too large (Loan throws the error).
            return Loan(length, self);
        }

        Enter(self);
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
            Publish(_loanSlot, _next);
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
        return new Span<byte>(_loanSlot + _slotHeaderBytes, Math.Min(_slotDataBytes, _loanLength - (_chunkIndex * _slotDataBytes)));
    }

    /// <summary>
    /// Every loan sets what it uses (<see cref="_loanSlot"/> included), so only what a segmented loan set is reset here.
    /// The hot path's stores queue behind the slot's while its line comes from the subscriber's core; saving these two
    /// alone made no difference that could be measured (docs/how-it-measures.md), but they were not needed.
    /// </summary>
    private void EndLoan()
    {
        _loaned = false;
        if (_segmented)
        {
            _segmented = false;
            _holdChunks = false;
        }

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
                if (_holdChunks)
                {
                    PublishHeld(_chunkCount);
                }
                else
                {
                    Publish(slot, _next);
                }
            }
            else if (slot != null)
            {
                WriteSlotHeader(slot, _loanLength, _loanLength, 0, 1);
                Publish(slot, _next);
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
            message.Slice(offset, length).CopyTo(new Span<byte>(slot + _slotHeaderBytes, length));
            WriteSlotHeader(slot, total, length, chunk, count);

            // Each chunk is published on its own, so subscribers copy chunk k while we write chunk k+1.
            Publish(slot, sequence);
        }
    }

    /// <summary>The four fields in two 8-byte stores (the layout is little-endian).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteSlotHeader(byte* slot, int messageLength, int chunkLength, int chunkIndex, int chunkCount)
    {
        *(ulong*)(slot + MessageLengthOffset) = (uint)messageLength | ((ulong)(uint)chunkLength << 32);
        *(ulong*)(slot + ChunkIndexOffset) = (uint)chunkIndex | ((ulong)(uint)chunkCount << 32);
    }

    /// <summary>
    /// Publishes the slot of <paramref name="sequence"/> (= <see cref="_next"/>): its sequence word, written last with
    /// release, tells readers that the header and data before it are complete. No line that every reader polls is
    /// written per message: each reader polls the slot it is about to read, which it has to fetch anyway.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Publish(byte* slot, long sequence)
    {
        _next = sequence + 1;
        Volatile.Write(ref *(long*)(slot + SlotSequenceOffset), sequence + 1);
        if (_block)
        {
            WakeReaders();
        }
    }

    /// <summary>Publishes the <paramref name="count"/> chunks of a held message: chunks 1.. first, chunk 0 last.</summary>
    private void PublishHeld(int count)
    {
        long first = _next;
        for (int chunk = 1; chunk < count; chunk++)
        {
            Volatile.Write(ref *(long*)(SlotAt(first + chunk) + SlotSequenceOffset), first + chunk + 1);
        }

        // A reader waits on chunk 0 (a joiner is placed at a message start): seeing it, it sees every chunk above.
        Publish(SlotAt(first), first);
        _next = first + count;
    }

    private void WakeReaders()
    {
        // Dekker with SleepOnData: we store the slot's sequence, fence, read the waiter count; a reader increments the
        // count (a fence), then reads the sequence. Either we see its count or it sees our sequence. When we see a
        // sleeper, the increment changes the futex word it read before announcing itself, so a FUTEX_WAIT that has not
        // started yet returns at once: no lost wake-up, and no write to a shared line while nobody sleeps.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref *_dataWaiters) != 0)
        {
            Interlocked.Increment(ref *_dataSignal);
            LinuxNative.FutexWake(_dataSignal, int.MaxValue);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* SlotAt(long sequence) => _slots + (long)(int)(sequence & _slotMask) * _slotBytes;

    /// <summary>Waits until every live subscriber has read the message that last used the slot of <paramref name="sequence"/>.</summary>
    private void WaitForSpace(long sequence)
    {
        // The slowest cursor must be past sequence - slotCount, the previous occupant of the slot.
        long needed = sequence - _slotCount + 1;
        long started = Environment.TickCount64;
        long lastCheck = started;
        while (true)
        {
            long min = ScanCursors();
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
                _subscribers.CheckLiveness(needed, _next, now, now - started, forReply: -1);
            }

            if (_block)
            {
                int observed = Volatile.Read(ref *_publisherSignal);

                // Wake me once a quarter of the ring is free, not at every slot: fewer futex round trips when saturated.
                // Capped at what is published: a subscriber that has read everything must count as worth waking for.
                Volatile.Write(ref *_wakeAt, Math.Min(needed + _slotCount / 4, _next));
                Interlocked.Exchange(ref *_waitingForSpace, 1);
                if (ScanCursors() < needed && !_closing)
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
    internal long ScanCursors()
    {
        bool admitted = false;
        long min = _subscribers.ScanMin(_next, ref admitted);
        if (admitted && _block)
        {
            // A new subscriber may already sleep in TryReceive, waiting to be admitted.
            WakeReaders();
        }

        return min;
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) =>
        TryReceiveReply(out reply, cancellationToken, Environment.CurrentManagedThreadId);

    private bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken, int self)
    {
        Enter(self);
        bool holding = false;
        try
        {
            holding = _replies.TryTake(out reply, cancellationToken);
            return holding;
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
        _replies.Release();
        Exit();
    }

    /// <summary>Test hook: how many receivers have announced a sleep on this ring's data signal.</summary>
    internal int DataWaiters => Volatile.Read(ref *_dataWaiters);

    /// <summary>Test hook: registers <paramref name="pid"/> as an active subscriber that never reads, as a real one that got stuck would.</summary>
    internal int AddSubscriberForTest(int pid, int subscriberIndex)
    {
        int slot = _subscribers.AddForTest(pid, subscriberIndex, _next);
        _gateLimit = 0;
        return slot;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Enter(int self)
    {
        Volatile.Write(ref _inside, self);
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

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this, Environment.CurrentManagedThreadId));

    /// <summary>
    /// The static-dispatch adapter (see <see cref="IPublisherPath"/>): messages in chunks, written in place. It carries
    /// the loop thread's id, which marks the mapping as in use: read per message, it cost a thread-local lookup each time.
    /// </summary>
    private readonly struct HotPath(ShmRingPublisher endpoint, int self) : IPublisherPath
    {
        public bool Segmented => true;

        public bool FirstSegmentWritableUntilSend => endpoint.FirstSegmentWritableUntilSend;

        public Span<byte> LoanFirstSegment(int length) => endpoint.LoanFirstSegment(length, self);

        public Span<byte> LoanNextSegment() => endpoint.LoanNextSegment();

        public void Send() => endpoint.Send();

        public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) =>
            endpoint.TryReceiveReply(out reply, cancellationToken, self);

        public void ReleaseReply() => endpoint.ReleaseReply();
    }
}
