using System.Runtime.InteropServices;

namespace IpcBench.Iceoryx2.Interop;

/// <summary>
/// Source-generated P/Invoke declarations for libipcbench_iox2.so (see native/iceoryx2-ipcbench/README.md).
/// Handles are passed as raw <see cref="nint"/>; the wrappers keep their <see cref="SafeHandle"/> alive with
/// <see cref="GC.KeepAlive(object?)"/> so the hot path does no ref-counting and no marshalling.
/// <para>
/// <see cref="SuppressGCTransitionAttribute"/> marks the per-message calls that are short and can never wait:
/// loan (static allocation, fails instead of waiting), discard, receive and release (lock-free queue operations;
/// <c>ipc::Service</c> ports are single-threaded, so no lock either; a receive maps a new publisher's segment only when
/// the set of publishers changed, which the handshake settles before the first message). They skip the switch to preemptive GC mode and
/// back, which costs about as much as the call itself. Never add it to a call that can wait: send, send-and-loan and
/// send-copy retry inside iceoryx2 while a no-loss subscriber is full (up to the send timeout), and a GC would stall
/// every managed thread for that long; the same for notify (a system call), listener waits, handshakes and anything
/// that creates, connects or destroys (shared-memory mapping). receive-copy is left out too: it copies up to a whole
/// message (hundreds of microseconds at 512 KB).
/// </para>
/// </summary>
internal static unsafe partial class NativeMethods
{
    internal const string LibraryName = "ipcbench_iox2";

    /// <summary>Must match IOX2B_ABI_VERSION in the Rust crate.</summary>
    internal const int ExpectedAbiVersion = 2;

    internal const int Ok = 0;
    internal const int NoSample = 1;
    internal const int Timeout = 2;

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_abi_version();

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_last_error(byte* buf, nuint len);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_set_log_level(int level);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_cleanup_dead_nodes(ulong* cleaned, ulong* failed);

    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_service_exists(string name, uint pattern, int* exists);

    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_service_hash(string name, uint pattern, byte* buf, nuint len);

    // node
    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_node_create(string? name, nint* node);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_node_destroy(nint node);

    // publisher
    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_publisher_create(nint node, string service, PubSubConfig* config, nint* publisher);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_destroy(nint publisher);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_publisher_loan(nint publisher, nuint len, byte** data, ulong* token);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_send(nint publisher, ulong token, ulong* receivers);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_send_and_loan(nint publisher, ulong token, ulong* receivers, nuint nextLength, byte** nextData, ulong* nextToken);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_publisher_discard(nint publisher, ulong token);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_send_copy(nint publisher, byte* data, nuint len, ulong* receivers);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_wait_for_subscribers(nint publisher, uint minSubscribers, long timeoutUs, ulong* subscribers);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_update_connections(nint publisher);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_publisher_service_info(nint publisher, NativeServiceInfo* info);

    // subscriber
    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_subscriber_create(nint node, string service, PubSubConfig* config, nint* subscriber);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_subscriber_destroy(nint subscriber);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_subscriber_receive(nint subscriber, ulong releaseToken, NativeSample* sample);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_subscriber_receive_batch(nint subscriber, NativeSample* samples, nuint max, nuint* count);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_subscriber_release_and_receive_batch(nint subscriber, NativeSample* samples, nuint held, nuint max, nuint* count);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_subscriber_release(nint subscriber, ulong token);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int iox2b_subscriber_release_all(nint subscriber, nuint* released);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_subscriber_receive_copy(nint subscriber, byte* buf, nuint cap, nuint* len);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_subscriber_has_samples(nint subscriber, int* has);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_subscriber_wait_for_publishers(nint subscriber, uint minPublishers, long timeoutUs, ulong* publishers);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_subscriber_update_connections(nint subscriber);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_subscriber_service_info(nint subscriber, NativeServiceInfo* info);

    // events
    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_notifier_create(nint node, string service, EventConfig* config, nint* notifier);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_notifier_destroy(nint notifier);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_notifier_notify(nint notifier, ulong eventId, ulong* listeners);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_notifier_listener_count(nint notifier, ulong* listeners);

    [LibraryImport(LibraryName, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int iox2b_listener_create(nint node, string service, EventConfig* config, nint* listener);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_listener_destroy(nint listener);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_listener_wait(nint listener, long timeoutUs, ulong* count);

    [LibraryImport(LibraryName)]
    internal static partial int iox2b_listener_notifier_count(nint listener, ulong* notifiers);
}

/// <summary>Mirror of <c>Iox2bPubSubConfig</c> (48 bytes).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct PubSubConfig
{
    public ulong MaxMessageSize;
    public uint MaxPublishers;
    public uint MaxSubscribers;
    public uint MaxNodes;
    public uint SubscriberBufferSize;
    public uint SubscriberMaxBorrowedSamples;
    public uint PublisherMaxLoanedSamples;
    public uint Lossy;
    public uint Reserved;
    public long SendTimeoutUs;
}

/// <summary>Mirror of <c>Iox2bEventConfig</c>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct EventConfig
{
    public uint MaxNotifiers;
    public uint MaxListeners;
    public uint MaxNodes;
    public uint EventIdMaxValue;
}

/// <summary>Mirror of <c>Iox2bSample</c>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct NativeSample
{
    public nint Data;
    public nuint Length;
    public ulong Token;
}

/// <summary>Mirror of <c>Iox2bServiceInfo</c>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct NativeServiceInfo
{
    public ulong Publishers;
    public ulong Subscribers;
    public ulong MaxPublishers;
    public ulong MaxSubscribers;
    public ulong MaxNodes;
    public ulong SubscriberBufferSize;
    public ulong SubscriberMaxBorrowedSamples;
    public uint SafeOverflow;
    public uint Reserved;
}
