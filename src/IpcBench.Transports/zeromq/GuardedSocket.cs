using NetMQ;

namespace IpcBench.Transports.ZeroMq;

/// <summary>
/// One NetMQ socket that one thread at a time uses and any thread may close. NetMQ sockets are not thread-safe, yet
/// endpoints are disposed from another thread while their owner may be blocked in a send to a subscriber that stopped
/// reading (ScenarioRun.StopPublishers relies on that to release it). So no wait here is unbounded: each waits in slices
/// and rechecks the closed flag, and <see cref="Dispose"/> closes the socket only once the user has left it (the lock also
/// gives a socket that moves between threads, e.g. WaitForSubscribers on a pool thread, the memory barrier NetMQ needs).
/// </summary>
internal sealed class GuardedSocket(NetMQSocket socket, WaitMode waitMode) : IDisposable
{
    /// <summary>How long a blocked call may stay inside NetMQ before it looks at the closed flag again.</summary>
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(50);

    private readonly Lock _gate = new();
    private volatile bool _closed;
    private int _disposed;

    public bool IsClosed => _closed;

    /// <summary>
    /// Waits (per the wait mode) until NetMQ takes the frame; it then owns it. False once closed locally. A peer that is
    /// gone (its connection closed, so ROUTER_MANDATORY cannot route to it) is an <see cref="IOException"/>.
    /// </summary>
    public bool TrySend(ref Msg frame, bool more)
    {
        lock (_gate)
        {
            while (!_closed)
            {
                try
                {
                    if (socket.TrySend(ref frame, waitMode == WaitMode.Block ? Slice : TimeSpan.Zero, more))
                    {
                        return true;
                    }
                }
                catch (HostUnreachableException e)
                {
                    throw new IOException("The peer is gone (its ZeroMQ connection closed).", e);
                }
                catch (TerminatingException)
                {
                    return false;
                }

                if (waitMode != WaitMode.Block)
                {
                    Idle.Pause(waitMode);
                }
            }

            return false;
        }
    }

    /// <summary>
    /// Waits for the next frame into <paramref name="frame"/> (which must be initialised). False once closed locally,
    /// cancelled, or past <paramref name="deadline"/> (a <see cref="Environment.TickCount64"/>); the caller tells which.
    /// </summary>
    public bool TryReceive(ref Msg frame, CancellationToken cancellationToken, long deadline = long.MaxValue) =>
        TryReceive(ref frame, waitMode, cancellationToken, deadline);

    /// <inheritdoc cref="TryReceive(ref Msg, CancellationToken, long)"/>
    public bool TryReceive(ref Msg frame, WaitMode mode, CancellationToken cancellationToken, long deadline = long.MaxValue)
    {
        lock (_gate)
        {
            while (!_closed && !cancellationToken.IsCancellationRequested && Environment.TickCount64 < deadline)
            {
                try
                {
                    if (socket.TryReceive(ref frame, mode == WaitMode.Block ? Slice : TimeSpan.Zero))
                    {
                        return true;
                    }
                }
                catch (TerminatingException)
                {
                    return false;
                }

                if (mode != WaitMode.Block)
                {
                    Idle.Pause(mode);
                }
            }

            return false;
        }
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        _closed = true;
        lock (_gate)
        {
            // Linger is zero (ZeroMqSockets), so closing neither waits for queued messages nor keeps the context busy.
            socket.Dispose();
        }
    }
}
