using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using IpcBench.Iceoryx2.Interop;

namespace IpcBench.Iceoryx2;

/// <summary>
/// A received sample: a read-only view of shared memory, valid until it is released (or the subscriber is
/// disposed, which releases everything). Same layout as the native <c>Iox2bSample</c>, so batches are filled
/// in place. A default value is "no sample".
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public readonly unsafe struct ReceivedSample
{
    private readonly nint _data;
    private readonly nuint _length;
    private readonly ulong _token;

    /// <summary>True for the default value (no sample).</summary>
    public bool IsEmpty => _token == 0;

    public int Length => (int)_length;

    /// <summary>Release token (0 = no sample).</summary>
    public ulong Token => _token;

    /// <summary>The payload in shared memory. Do not use it after the sample was released.</summary>
    public ReadOnlySpan<byte> Payload => new((void*)_data, (int)_length);
}

/// <summary>
/// A subscriber on a raw-bytes publish-subscribe service. Not thread-safe: use one subscriber from one thread at
/// a time. Receive/release do not allocate.
/// </summary>
public sealed unsafe class Iceoryx2Subscriber : IDisposable
{
    private readonly SubscriberHandle _handle;
    private nint _ptr;

    internal Iceoryx2Subscriber(SubscriberHandle handle, string serviceName)
    {
        _handle = handle;
        _ptr = handle.DangerousGetHandle();
        ServiceName = serviceName;
    }

    public string ServiceName { get; }

    /// <summary>Receives the next sample, if any. Release it with <see cref="Release"/>.</summary>
    /// <exception cref="Iceoryx2Exception"><see cref="Iceoryx2ErrorCode.ExceedsMaxBorrows"/> when too many samples are held.</exception>
    public bool TryReceive(out ReceivedSample sample)
    {
        ReceivedSample s;
        int status = Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_receive(Ptr, 0, (NativeSample*)&s));
        GC.KeepAlive(this);
        sample = s;
        return status == NativeMethods.Ok;
    }

    /// <summary>
    /// Releases <paramref name="sample"/> (unless empty) and receives the next one into it, in one native call.
    /// On false <paramref name="sample"/> is empty. The fast path for "process one, fetch the next".
    /// </summary>
    public bool ReleaseAndTryReceive(ref ReceivedSample sample)
    {
        ReceivedSample s;
        int status = Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_receive(Ptr, sample.Token, (NativeSample*)&s));
        GC.KeepAlive(this);
        sample = s;
        return status == NativeMethods.Ok;
    }

    /// <summary>Returns a sample's memory to the publisher.</summary>
    public void Release(in ReceivedSample sample)
    {
        Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_release(Ptr, sample.Token));
        GC.KeepAlive(this);
    }

    /// <summary>
    /// Receives up to <c>samples.Length</c> samples (bounded by the free borrow slots, see
    /// <see cref="PublishSubscribeOptions.SubscriberMaxBorrowedSamples"/>). Returns how many were filled.
    /// </summary>
    public int TryReceiveBatch(Span<ReceivedSample> samples)
    {
        nuint count;
        fixed (ReceivedSample* p = samples)
        {
            Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_receive_batch(Ptr, (NativeSample*)p, (nuint)samples.Length, &count));
        }

        GC.KeepAlive(this);
        return (int)count;
    }

    /// <summary>
    /// Releases the first <paramref name="held"/> samples of <paramref name="samples"/> (empty ones are skipped), then
    /// receives up to <c>samples.Length</c> samples into it, in one native call: a receiver hands back the batch it has
    /// finished with and gets the next. Returns how many were received (0 = none available; the released ones are
    /// released either way). Bounded by the free borrow slots (<see cref="PublishSubscribeOptions.SubscriberMaxBorrowedSamples"/>).
    /// </summary>
    /// <exception cref="Iceoryx2Exception"><see cref="Iceoryx2ErrorCode.InvalidToken"/> when a sample to release was
    /// already released (the valid ones are released, nothing is received).</exception>
    public int ReleaseAndTryReceiveBatch(Span<ReceivedSample> samples, int held)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(held);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(held, samples.Length);
        nuint count;
        fixed (ReceivedSample* p = samples)
        {
            Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_release_and_receive_batch(
                Ptr, (NativeSample*)p, (nuint)held, (nuint)samples.Length, &count));
        }

        GC.KeepAlive(this);
        return (int)count;
    }

    /// <summary>Releases every sample the subscriber holds; returns how many.</summary>
    public int ReleaseAll()
    {
        nuint n;
        Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_release_all(Ptr, &n));
        GC.KeepAlive(this);
        return (int)n;
    }

    /// <summary>
    /// Receive + copy into <paramref name="destination"/> + release in one native call. Returns false when no
    /// sample was available. Throws <see cref="Iceoryx2ErrorCode.BufferTooSmall"/> (the sample is consumed) when
    /// the destination is too small.
    /// </summary>
    public bool TryReceiveCopy(Span<byte> destination, out int length)
    {
        nuint len;
        int status;
        fixed (byte* p = destination)
        {
            status = Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_receive_copy(Ptr, p, (nuint)destination.Length, &len));
        }

        GC.KeepAlive(this);
        length = (int)len;
        return status == NativeMethods.Ok;
    }

    /// <summary>True when a receive would return a sample.</summary>
    public bool HasSamples
    {
        get
        {
            int has;
            Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_has_samples(Ptr, &has));
            GC.KeepAlive(this);
            return has != 0;
        }
    }

    /// <summary>
    /// Waits until the service has at least <paramref name="minPublishers"/> publishers and connects to them.
    /// Returns false on timeout (<see cref="Timeout.InfiniteTimeSpan"/> waits forever).
    /// </summary>
    public bool WaitForPublishers(int minPublishers, TimeSpan timeout)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minPublishers);
        ulong count;
        int status = Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_wait_for_publishers(
            Ptr, (uint)minPublishers, Timeouts.ToMicroseconds(timeout), &count));
        GC.KeepAlive(this);
        return status == NativeMethods.Ok;
    }

    public void UpdateConnections()
    {
        Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_update_connections(Ptr));
        GC.KeepAlive(this);
    }

    public ServiceInfo GetServiceInfo()
    {
        NativeServiceInfo info;
        Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_service_info(Ptr, &info));
        GC.KeepAlive(this);
        return ServiceInfo.From(info);
    }

    /// <summary>Destroys the subscriber; samples still held are released first (their spans become invalid).</summary>
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
    private void ThrowDisposed() => throw new ObjectDisposedException(nameof(Iceoryx2Subscriber), $"subscriber on '{ServiceName}' is disposed");
}
