namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// Lets the one thread that drives a set of native iceoryx2 ports use them while any other thread may dispose them.
/// Freeing a port (or unmapping a sample still being read) under a thread inside a native call would crash the
/// process, so <see cref="Close"/> only frees at once when the owner is idle; otherwise the owner frees on its next
/// <see cref="Exit"/>. Two interlocked instructions per use, no lock.
/// </summary>
internal sealed class PortGate
{
    private const int Idle = 0;
    private const int Busy = 1;
    private const int Closing = 2;
    private const int Closed = 3;

    private int _state;

    /// <summary>True once <see cref="Close"/> was called: busy loops should end.</summary>
    public bool IsClosing => Volatile.Read(ref _state) >= Closing;

    /// <summary>Marks the ports in use by the calling thread; false when they are closing or closed.</summary>
    public bool TryEnter() => Interlocked.CompareExchange(ref _state, Busy, Idle) == Idle;

    /// <summary>Ends a use. True when the caller must now free the ports (they were closed meanwhile).</summary>
    public bool Exit()
    {
        int prior = Interlocked.CompareExchange(ref _state, Idle, Busy);
        return prior == Closing && Interlocked.CompareExchange(ref _state, Closed, Closing) == Closing;
    }

    /// <summary>
    /// Asks for the ports to be freed. True when the caller must free them now; false when the owner will on its
    /// <see cref="Exit"/> or they already were.
    /// </summary>
    public bool Close()
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state == Idle)
            {
                if (Interlocked.CompareExchange(ref _state, Closed, Idle) == Idle)
                {
                    return true;
                }
            }
            else if (state == Busy)
            {
                if (Interlocked.CompareExchange(ref _state, Closing, Busy) == Busy)
                {
                    return false;
                }
            }
            else
            {
                return false;
            }
        }
    }
}
