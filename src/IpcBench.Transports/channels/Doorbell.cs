using System.Runtime.InteropServices;

namespace IpcBench.Transports.Channels;

/// <summary>
/// How one BLOCK-mode thread sleeps until the other side of a channel has changed it, without allocating. The sleeper
/// <see cref="Arm"/>s, looks at the channel once more, then <see cref="Sleep"/>s; the other side <see cref="Ring"/>s
/// after each change it makes (<see cref="Ring"/> says why the channel's lock orders the two looks). Made with its
/// channel, so nothing is created lazily inside a measured loop.
/// </summary>
/// <remarks>
/// Not the channel's WaitToReadAsync/WaitToWriteAsync: blocking a thread on their pending ValueTask allocates now and
/// then, in two ways the transport cannot prevent. A wait completed between WaitTo*Async and the continuation's
/// registration makes the channel queue that continuation to the thread pool (a 32-byte work item, on the waiting
/// thread); and a bounded channel always wakes a blocked writer through the thread pool, whose queueing allocates on
/// the reader's thread whenever the pool (re)creates a worker. Both were measured with a loop charging each call's
/// bytes to its call site (see the channels README).
/// </remarks>
[StructLayout(LayoutKind.Explicit, Size = 3 * CacheLine)]
internal sealed class Doorbell
{
    /// <summary>How often a sleeper looks at its token and channel unrung: the stop of a BLOCK scenario waits this long at most.</summary>
    public static readonly TimeSpan Poll = TimeSpan.FromMilliseconds(20);

    private const int CacheLine = 64;

    /// <summary>
    /// Alone on its cache line: the ringer reads it after every message, and a neighbour written by the other side
    /// (the channel's other doorbell, made next to this one) would make each of those reads a cache miss.
    /// </summary>
    [FieldOffset(CacheLine)]
    private int _armed;

    [FieldOffset(2 * CacheLine)]
    private readonly SemaphoreSlim _signal = new(0);

    /// <summary>
    /// True while the sleeper should look again before arming: a few microseconds of spinning, as every blocking
    /// primitive of .NET spins before it sleeps, but unarmed, so a message that arrives meanwhile costs the other side
    /// no ring. Armed at once, the sleeper had the writer ring it for nearly every 8 B message while it was still
    /// spinning inside the semaphore.
    /// </summary>
    public static bool SpinFirst(ref SpinWait spinner)
    {
        if (spinner.NextSpinWillYield)
        {
            return false;
        }

        spinner.SpinOnce(sleep1Threshold: -1);
        return true;
    }

    /// <summary>The sleeper, before its last look: a full fence, so that look cannot happen before the flag is seen.</summary>
    public void Arm() => Interlocked.Exchange(ref _armed, 1);

    /// <summary>The sleeper, when its last look found what it waited for. A ring that raced it leaves one spare wake-up.</summary>
    public void Disarm() => Volatile.Write(ref _armed, 0);

    /// <summary>Whether the sleeper has armed (a plain look, for a ringer that rings only on a condition).</summary>
    public bool IsArmed => Volatile.Read(ref _armed) != 0;

    /// <summary>Until rung, or <see cref="Poll"/>; a spare wake-up left by an earlier ring only costs one more look.</summary>
    public void Sleep() => _signal.Wait(Poll);

    /// <summary>
    /// The other side, after each change to the channel: wakes the sleeper if armed, once. No fence of its own: the
    /// change was made under the channel's lock, and the sleeper's last look takes the same lock after arming, so
    /// either that look comes after the change (and sees it) or its arming comes before the change's lock was taken,
    /// and the read of the flag, after that acquire, sees it armed.
    /// </summary>
    public void Ring()
    {
        if (IsArmed && Interlocked.Exchange(ref _armed, 0) != 0)
        {
            _signal.Release();
        }
    }
}
