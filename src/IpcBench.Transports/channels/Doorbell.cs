namespace IpcBench.Transports.Channels;

/// <summary>
/// How one BLOCK-mode thread sleeps until the other side of a channel has changed it, without allocating. The sleeper
/// <see cref="Arm"/>s, looks at the channel once more, then <see cref="Sleep"/>s; the other side <see cref="Ring"/>s
/// after each change it makes. The channel's own lock orders the two looks: either the sleeper's second look sees the
/// change, or the ringer's look at the flag (after its change) sees the sleeper armed. Made with its channel, so
/// nothing is created lazily inside a measured loop.
/// </summary>
/// <remarks>
/// Not the channel's WaitToReadAsync/WaitToWriteAsync: blocking a thread on their pending ValueTask allocates now and
/// then, in two ways the transport cannot prevent. A wait completed between WaitTo*Async and the continuation's
/// registration makes the channel queue that continuation to the thread pool (a 32-byte work item, on the waiting
/// thread); and a bounded channel always wakes a blocked writer through the thread pool, whose queueing allocates on
/// the reader's thread whenever the pool (re)creates a worker. Both were measured with a loop charging each call's
/// bytes to its call site (see the channels README).
/// </remarks>
internal sealed class Doorbell
{
    /// <summary>How often a sleeper looks at its token and channel unrung: the stop of a BLOCK scenario waits this long at most.</summary>
    public static readonly TimeSpan Poll = TimeSpan.FromMilliseconds(20);

    private readonly SemaphoreSlim _signal = new(0);
    private int _armed;

    /// <summary>The sleeper, before its last look: a full fence, so that look cannot happen before the flag is seen.</summary>
    public void Arm() => Interlocked.Exchange(ref _armed, 1);

    /// <summary>The sleeper, when its last look found what it waited for. A ring that raced it leaves one spare wake-up.</summary>
    public void Disarm() => Volatile.Write(ref _armed, 0);

    /// <summary>Until rung, or <see cref="Poll"/>; a spare wake-up left by an earlier ring only costs one more look.</summary>
    public void Sleep() => _signal.Wait(Poll);

    /// <summary>The other side, after each change to the channel: wakes the sleeper if armed, once.</summary>
    public void Ring()
    {
        // The change just made (under the channel's lock) must be visible before the flag is read: without the fence
        // the read could pass it, and a sleeper arming in between would sleep through the change.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _armed) != 0 && Interlocked.Exchange(ref _armed, 0) != 0)
        {
            _signal.Release();
        }
    }
}
