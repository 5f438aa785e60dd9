using System.Diagnostics.CodeAnalysis;
using IpcBench.Iceoryx2.Interop;

namespace IpcBench.Iceoryx2;

/// <summary>Wakes the listeners of an event service (e.g. "new sample available"). Not thread-safe.</summary>
public sealed unsafe class Iceoryx2Notifier : IDisposable
{
    private readonly NotifierHandle _handle;
    private nint _ptr;

    internal Iceoryx2Notifier(NotifierHandle handle, string serviceName)
    {
        _handle = handle;
        _ptr = handle.DangerousGetHandle();
        ServiceName = serviceName;
    }

    public string ServiceName { get; }

    /// <summary>Notifies every listener; returns how many were notified.</summary>
    public int Notify(ulong eventId = 0)
    {
        ulong n;
        Iceoryx2Library.Check(NativeMethods.iox2b_notifier_notify(Ptr, eventId, &n));
        GC.KeepAlive(this);
        return (int)n;
    }

    /// <summary>Number of listeners attached to the event service.</summary>
    public int ListenerCount
    {
        get
        {
            ulong n;
            Iceoryx2Library.Check(NativeMethods.iox2b_notifier_listener_count(Ptr, &n));
            GC.KeepAlive(this);
            return (int)n;
        }
    }

    public void Dispose()
    {
        _ptr = 0;
        _handle.Dispose();
    }

    private nint Ptr => _ptr != 0 ? _ptr : ThrowDisposed();

    [DoesNotReturn]
    private nint ThrowDisposed() => throw new ObjectDisposedException(nameof(Iceoryx2Notifier), $"notifier on '{ServiceName}' is disposed");
}

/// <summary>Blocks a thread in the kernel until a notifier fires (or a timeout passes). Not thread-safe.</summary>
public sealed unsafe class Iceoryx2Listener : IDisposable
{
    private readonly ListenerHandle _handle;
    private nint _ptr;

    internal Iceoryx2Listener(ListenerHandle handle, string serviceName)
    {
        _handle = handle;
        _ptr = handle.DangerousGetHandle();
        ServiceName = serviceName;
    }

    public string ServiceName { get; }

    /// <summary>
    /// Sleeps until notified or until <paramref name="timeout"/> passes (<see cref="Timeout.InfiniteTimeSpan"/> =
    /// forever, <see cref="TimeSpan.Zero"/> = just check). Consumes all pending notifications. Returns false on timeout.
    /// </summary>
    public bool Wait(TimeSpan timeout) => Wait(timeout, out _);

    /// <inheritdoc cref="Wait(TimeSpan)"/>
    /// <param name="timeout">see above</param>
    /// <param name="notifications">number of notifications consumed</param>
    public bool Wait(TimeSpan timeout, out ulong notifications)
    {
        ulong n;
        int status = Iceoryx2Library.Check(NativeMethods.iox2b_listener_wait(Ptr, Timeouts.ToMicroseconds(timeout), &n));
        GC.KeepAlive(this);
        notifications = n;
        return status == NativeMethods.Ok;
    }

    /// <summary>Non-blocking: consumes pending notifications, returns true if there were any.</summary>
    public bool TryWait() => Wait(TimeSpan.Zero, out _);

    /// <summary>Number of notifiers attached to the event service.</summary>
    public int NotifierCount
    {
        get
        {
            ulong n;
            Iceoryx2Library.Check(NativeMethods.iox2b_listener_notifier_count(Ptr, &n));
            GC.KeepAlive(this);
            return (int)n;
        }
    }

    public void Dispose()
    {
        _ptr = 0;
        _handle.Dispose();
    }

    private nint Ptr => _ptr != 0 ? _ptr : ThrowDisposed();

    [DoesNotReturn]
    private nint ThrowDisposed() => throw new ObjectDisposedException(nameof(Iceoryx2Listener), $"listener on '{ServiceName}' is disposed");
}
