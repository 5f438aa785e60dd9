namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// Lets the one thread that drives a set of native iceoryx2 ports use them while any other thread may dispose them.
/// Freeing a port (or unmapping a sample still being read) under a thread inside a native call would crash the
/// process, so <see cref="Close"/> frees at once only when the owner is outside; otherwise the owner frees when it
/// leaves (<see cref="Exit"/>) or next tries to enter. Exactly one of them frees, exactly once.
/// <para>
/// The owner enters and leaves once per message, so its side is two plain volatile stores and loads, no interlocked
/// instruction: Dekker's handshake (owner: write busy, read closing; closer: write closing, read busy) needs a full
/// fence between each write and read, and the closer supplies both with <see cref="Interlocked.MemoryBarrierProcessWide"/>,
/// which the .NET memory model defines as every thread executing a full fence somewhere in its program order (a
/// membarrier system call on Linux: microseconds, once per endpoint). So the two cannot both miss each other: either
/// the closer sees the owner inside, or the owner sees the gate closing.
/// </para>
/// </summary>
internal sealed class PortGate(Action free)
{
    private int _busy; // written by the owner only
    private int _closing;
    private int _freed;

    /// <summary>True once <see cref="Close"/> was called: busy loops should end.</summary>
    public bool IsClosing => Volatile.Read(ref _closing) != 0;

    /// <summary>Marks the ports in use by the calling (owner) thread; false when they are closing or closed.</summary>
    public bool TryEnter()
    {
        Volatile.Write(ref _busy, 1);
        if (Volatile.Read(ref _closing) == 0)
        {
            return true;
        }

        // The closer may have seen this thread busy and left the freeing to it.
        Exit();
        return false;
    }

    /// <summary>Ends a use; frees the ports when they were closed meanwhile.</summary>
    public void Exit()
    {
        Volatile.Write(ref _busy, 0);
        if (Volatile.Read(ref _closing) != 0)
        {
            FreeOnce();
        }
    }

    /// <summary>Asks for the ports to be freed: now when the owner is outside, otherwise by the owner when it leaves.</summary>
    public void Close()
    {
        if (Interlocked.Exchange(ref _closing, 1) != 0)
        {
            return;
        }

        // Makes the owner's last write of _busy visible here, and this write of _closing to the owner's next read.
        Interlocked.MemoryBarrierProcessWide();
        if (Volatile.Read(ref _busy) == 0)
        {
            FreeOnce();
        }
    }

    // The owner may leave just after the closer saw it busy: both then see the other and try; one wins.
    private void FreeOnce()
    {
        if (Interlocked.Exchange(ref _freed, 1) == 0)
        {
            free();
        }
    }
}
