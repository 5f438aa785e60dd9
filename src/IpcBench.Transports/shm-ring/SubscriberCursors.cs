using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using static IpcBench.Transports.SharedMemory.RingLayout;

namespace IpcBench.Transports.SharedMemory;

/// <summary>
/// The publisher's side of the cursor table: which subscribers read the ring, how far the slowest has read, and the
/// eviction of one that holds the ring up while dead or stalled. Used by the publisher's thread only (its lists are not
/// shared); the records themselves live in the ring file and are written by the subscribers too.
/// </summary>
[SupportedOSPlatform("linux")]
internal sealed unsafe class SubscriberCursors
{
    private readonly byte* _records;
    private readonly int _capacity;
    private readonly int _publisherIndex;
    private readonly long _stallMs;
    private readonly string _address;
    private readonly int _ownPid = Environment.ProcessId;

    private readonly bool[] _tracked;
    private readonly long[] _lastCursor;
    private readonly long[] _lastProgressMs;
    private readonly long[] _replyRead;

    public SubscriberCursors(byte* records, int capacity, int publisherIndex, long stallMs, string address)
    {
        _records = records;
        _capacity = capacity;
        _publisherIndex = publisherIndex;
        _stallMs = stallMs;
        _address = address;
        _tracked = new bool[capacity];
        _lastCursor = new long[capacity];
        _lastProgressMs = new long[capacity];
        _replyRead = new long[capacity];
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public byte* Record(int slot) => _records + (long)slot * CursorBytes;

    public bool IsTracked(int slot) => _tracked[slot];

    /// <summary>The subscriber has gone (detached or evicted): its link is closed.</summary>
    public void Untrack(int slot) => _tracked[slot] = false;

    /// <summary>How many echoes of this subscriber the publisher has read (round trips).</summary>
    public ref long ReplyRead(int slot) => ref _replyRead[slot];

    public int TrackedCount
    {
        get
        {
            int count = 0;
            foreach (bool tracked in _tracked)
            {
                count += tracked ? 1 : 0;
            }

            return count;
        }
    }

    public int[] TrackedSlots()
    {
        var slots = new List<int>();
        for (int i = 0; i < _capacity; i++)
        {
            if (_tracked[i])
            {
                slots.Add(i);
            }
        }

        return [.. slots];
    }

    /// <summary>
    /// The lowest cursor among active subscribers (<paramref name="next"/> when there are none), admitting those that asked
    /// to join at <paramref name="next"/>; <paramref name="admitted"/> turns true when one was (a blocking reader may
    /// already sleep, waiting for it).
    /// </summary>
    public long ScanMin(long next, ref bool admitted)
    {
        long min = next;
        byte* record = _records;
        for (int i = 0; i < _capacity; i++, record += CursorBytes)
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
                admitted |= Admit(i, record, next);
            }
            else if (state is CursorState.Detached && _tracked[i])
            {
                _tracked[i] = false;
                throw new IOException(
                    $"shm-ring {_address}: subscriber {SubscriberIndex(record)} (pid {Pid(record)}) detached while publisher {_publisherIndex} was still sending.");
            }
        }

        return min;
    }

    /// <summary>
    /// The publisher, being the only writer, places a new subscriber's cursor at the next sequence it will write; the
    /// subscriber receives everything published from then on. Doing it here rather than in the subscriber removes the
    /// race of a joiner reading the sequence while the publisher laps it.
    /// </summary>
    private bool Admit(int slot, byte* record, long next)
    {
        int pid = Pid(record);
        if (pid != _ownPid && pid > 0 && !ProcessInstance.IsRunning(pid))
        {
            Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Evicted, CursorState.Requested);
            return false;
        }

        Volatile.Write(ref *(long*)(record + CursorOffset), next);
        if (Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Active, CursorState.Requested) != CursorState.Requested)
        {
            return false;
        }

        _tracked[slot] = true;
        _lastCursor[slot] = next;
        _lastProgressMs[slot] = Environment.TickCount64;
        _replyRead[slot] = Volatile.Read(ref *(long*)(record + ReplyReadOffset));
        return true;
    }

    /// <summary>
    /// Runs every <see cref="ShmRingPublisher.LivenessIntervalMs"/> while the publisher waits: evicts, and throws about, a
    /// subscriber that holds it up (its cursor before <paramref name="needed"/>, or the one whose echo it awaits:
    /// <paramref name="forReply"/> ≥ 0) and is dead (its pid is gone) or stalled (neither its cursor nor its heartbeat
    /// moved for the stall timeout).
    /// </summary>
    public void CheckLiveness(long needed, long next, long nowMs, long waitedMs, int forReply)
    {
        byte* record = _records;
        for (int i = 0; i < _capacity; i++, record += CursorBytes)
        {
            if (!_tracked[i] || (forReply >= 0 && i != forReply)
                || Volatile.Read(ref *(int*)(record + StateOffset)) != CursorState.Active)
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
            string what = forReply >= 0 ? "its echo" : $"it to free ring space ({next - cursor} slots unread)";
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
        throw new IOException($"shm-ring {_address}: {reason}");
    }

    /// <summary>Test hook: registers <paramref name="pid"/> as an active subscriber that never reads, as a real one that got stuck would.</summary>
    public int AddForTest(int pid, int subscriberIndex, long next)
    {
        for (int i = 0; i < _capacity; i++)
        {
            byte* record = Record(i);
            if (Interlocked.CompareExchange(ref *(int*)(record + StateOffset), CursorState.Claimed, CursorState.Free) == CursorState.Free)
            {
                *(int*)(record + PidOffset) = pid;
                *(int*)(record + SubscriberIndexOffset) = subscriberIndex;
                Volatile.Write(ref *(long*)(record + HeartbeatOffset), Environment.TickCount64);
                Volatile.Write(ref *(int*)(record + StateOffset), CursorState.Requested);
                Admit(i, record, next);
                return i;
            }
        }

        throw new InvalidOperationException("No free subscriber slot.");
    }

    public static int Pid(byte* record) => Volatile.Read(ref *(int*)(record + PidOffset));

    public static int SubscriberIndex(byte* record) => Volatile.Read(ref *(int*)(record + SubscriberIndexOffset));
}
