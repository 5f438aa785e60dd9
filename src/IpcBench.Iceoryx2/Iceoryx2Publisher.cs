using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using IpcBench.Iceoryx2.Interop;

namespace IpcBench.Iceoryx2;

/// <summary>
/// A publisher on a raw-bytes publish-subscribe service. Not thread-safe: use one publisher from one thread at a
/// time. Loan/Send/SendCopy do not allocate.
/// </summary>
public sealed unsafe class Iceoryx2Publisher : IDisposable
{
    private readonly PublisherHandle _handle;
    private nint _ptr;

    internal Iceoryx2Publisher(PublisherHandle handle, string serviceName, PublishSubscribeOptions options)
    {
        _handle = handle;
        _ptr = handle.DangerousGetHandle();
        ServiceName = serviceName;
        Options = options;
    }

    public string ServiceName { get; }

    public PublishSubscribeOptions Options { get; }

    /// <summary>Largest payload this publisher can loan or send.</summary>
    public int MaxMessageSize => Options.MaxMessageSize;

    /// <summary>
    /// Loans an uninitialized shared-memory buffer of exactly <paramref name="length"/> bytes. Write the payload
    /// into <see cref="PublisherLoan.Payload"/>, then call <see cref="PublisherLoan.Send"/> (or
    /// <see cref="PublisherLoan.Discard"/>).
    /// </summary>
    /// <exception cref="Iceoryx2Exception"><see cref="Iceoryx2ErrorCode.PayloadTooLarge"/> above
    /// <see cref="MaxMessageSize"/>; <see cref="Iceoryx2ErrorCode.LoanFailed"/> with too many open loans.</exception>
    public PublisherLoan Loan(int length)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        byte* data;
        ulong token;
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_loan(Ptr, (nuint)length, &data, &token));
        GC.KeepAlive(this);
        return new PublisherLoan(this, token, data, length);
    }

    /// <summary>Loans a buffer and returns it with its token (the non-ref-struct form of <see cref="Loan"/>).</summary>
    public Span<byte> Loan(int length, out ulong token)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        byte* data;
        ulong t;
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_loan(Ptr, (nuint)length, &data, &t));
        GC.KeepAlive(this);
        token = t;
        return new Span<byte>(data, length);
    }

    /// <summary>Sends a loaned buffer. Returns the number of subscribers it was delivered to.</summary>
    public int Send(ulong token)
    {
        ulong receivers;
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_send(Ptr, token, &receivers));
        GC.KeepAlive(this);
        return (int)receivers;
    }

    /// <summary>
    /// Sends a loaned buffer and loans the next one of <paramref name="nextLength"/> bytes in the same native call (a
    /// publisher loop then makes one call per message). Returns the number of subscribers reached. When the next loan
    /// cannot be had (too large, no free slot) <paramref name="nextToken"/> is 0 and <paramref name="next"/> empty: the
    /// message was still sent, and <see cref="Loan(int, out ulong)"/> reports why.
    /// </summary>
    public int SendAndLoan(ulong token, int nextLength, out ulong nextToken, out Span<byte> next)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(nextLength);
        ulong receivers;
        byte* data;
        ulong t;
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_send_and_loan(Ptr, token, &receivers, (nuint)nextLength, &data, &t));
        GC.KeepAlive(this);
        nextToken = t;
        next = t == 0 ? default : new Span<byte>(data, nextLength);
        return (int)receivers;
    }

    /// <summary>Returns a loaned buffer without sending it.</summary>
    public void Discard(ulong token)
    {
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_discard(Ptr, token));
        GC.KeepAlive(this);
    }

    /// <summary>Loan + copy + send in one native call. Returns the number of subscribers reached.</summary>
    public int SendCopy(ReadOnlySpan<byte> payload)
    {
        ulong receivers;
        fixed (byte* p = payload)
        {
            Iceoryx2Library.Check(NativeMethods.iox2b_publisher_send_copy(Ptr, p, (nuint)payload.Length, &receivers));
        }

        GC.KeepAlive(this);
        return (int)receivers;
    }

    /// <summary>
    /// Waits until the service has at least <paramref name="minSubscribers"/> subscribers and connects to them.
    /// Call before the first send: a sample sent before a subscriber is connected is not delivered to it.
    /// Returns false on timeout (<see cref="Timeout.InfiniteTimeSpan"/> waits forever).
    /// </summary>
    public bool WaitForSubscribers(int minSubscribers, TimeSpan timeout)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minSubscribers);
        ulong count;
        int status = Iceoryx2Library.Check(NativeMethods.iox2b_publisher_wait_for_subscribers(
            Ptr, (uint)minSubscribers, Timeouts.ToMicroseconds(timeout), &count));
        GC.KeepAlive(this);
        return status == NativeMethods.Ok;
    }

    /// <summary>Connects to subscribers that appeared since the last send/update (send does this too).</summary>
    public void UpdateConnections()
    {
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_update_connections(Ptr));
        GC.KeepAlive(this);
    }

    /// <summary>Current configuration and port counts of the service.</summary>
    public ServiceInfo GetServiceInfo()
    {
        NativeServiceInfo info;
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_service_info(Ptr, &info));
        GC.KeepAlive(this);
        return ServiceInfo.From(info);
    }

    /// <summary>Destroys the publisher (open loans are discarded).</summary>
    public void Dispose()
    {
        _ptr = 0;
        _handle.Dispose();
    }

    private nint Ptr
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            nint p = _ptr;
            if (p == 0)
            {
                ThrowDisposed();
            }

            return p;
        }
    }

    [DoesNotReturn]
    private void ThrowDisposed() => throw new ObjectDisposedException(nameof(Iceoryx2Publisher), $"publisher on '{ServiceName}' is disposed");
}

/// <summary>
/// A loaned, not yet sent shared-memory buffer of an <see cref="Iceoryx2Publisher"/>. Send or discard it exactly
/// once; the span is invalid afterwards.
/// </summary>
public readonly unsafe ref struct PublisherLoan
{
    private readonly Iceoryx2Publisher _publisher;
    private readonly byte* _data;
    private readonly int _length;

    internal PublisherLoan(Iceoryx2Publisher publisher, ulong token, byte* data, int length)
    {
        _publisher = publisher;
        Token = token;
        _data = data;
        _length = length;
    }

    /// <summary>The loan's token (for <see cref="Iceoryx2Publisher.Send(ulong)"/>).</summary>
    public ulong Token { get; }

    /// <summary>The uninitialized payload buffer in shared memory; write all of it before sending.</summary>
    public Span<byte> Payload => new(_data, _length);

    public int Length => _length;

    /// <summary>Sends the loaned buffer; returns the number of subscribers reached.</summary>
    public int Send() => _publisher.Send(Token);

    /// <summary>Returns the buffer to the publisher without sending.</summary>
    public void Discard() => _publisher.Discard(Token);
}
