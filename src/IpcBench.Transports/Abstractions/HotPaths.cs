namespace IpcBench.Transports;

/// <summary>
/// The per-message calls of one publisher endpoint. Each transport implements it as a small struct over its sealed
/// endpoint class and hands it to <see cref="IPublisherLoop.Run{TPath}"/>: a generic over a struct gets its own compiled
/// copy of the loop, so every call below is direct and inlinable. (A generic over a class shares one copy for all
/// classes and dispatches through the interface, once per call, on each side of every message.)
/// </summary>
public interface IPublisherPath
{
    /// <summary>
    /// True when a message may travel in more than one segment. A constant per path type, so loops over transports
    /// that never split a message are compiled without the segment code.
    /// </summary>
    bool Segmented { get; }

    /// <summary>
    /// Starts a message of <paramref name="length"/> bytes that the caller writes in place. Returns the first segment,
    /// at least <c>min(length, MessageHeader.Size)</c> bytes; where it is shorter than the message (only when
    /// <see cref="Segmented"/>), fill it, then call <see cref="LoanNextSegment"/> until it returns an empty span, then
    /// <see cref="Send"/>. The segments, in order, are the message.
    /// </summary>
    Span<byte> LoanFirstSegment(int length);

    /// <summary>
    /// Hands over the segment just filled (the transport may deliver it already, so it must be complete) and returns the
    /// next one; empty once the segments cover the message. A previous segment must not be touched again.
    /// </summary>
    Span<byte> LoanNextSegment();

    /// <summary>
    /// True when the first segment of the current loan is delivered only by <see cref="Send"/>, so the writer may still
    /// write it (the header, once the payload's checksum is known) after the later segments.
    /// </summary>
    bool FirstSegmentWritableUntilSend { get; }

    /// <inheritdoc cref="IPublisherEndpoint.Send"/>
    void Send();

    /// <inheritdoc cref="IPublisherEndpoint.TryReceiveReply"/>
    bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken);

    /// <inheritdoc cref="IPublisherEndpoint.ReleaseReply"/>
    void ReleaseReply();
}

/// <summary>A publisher's hot loop, compiled per transport: <see cref="IPublisherEndpoint.Run"/> calls it with its path.</summary>
public interface IPublisherLoop
{
    void Run<TPath>(TPath path)
        where TPath : struct, IPublisherPath;
}

/// <summary>The per-message calls of one receiver; see <see cref="IPublisherPath"/> for why a struct.</summary>
public interface IReceiverPath
{
    /// <summary>True when a message may arrive in more than one segment; a constant per path type.</summary>
    bool Segmented { get; }

    /// <summary>
    /// Waits (per the endpoint's wait mode) for the next message and returns its first segment (at least
    /// <c>min(messageLength, MessageHeader.Size)</c> bytes) and the length of the whole message. Where the segment is
    /// shorter (only when <see cref="Segmented"/>), read the rest in place with <see cref="TryReceiveNextSegment"/>:
    /// no reassembly copy. Then <see cref="Release"/> (and <see cref="Reply"/> before it, if any). False when every link
    /// closed or <paramref name="cancellationToken"/> fired.
    /// </summary>
    bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken);

    /// <summary>
    /// The next segment of the message being received; the previous one is no longer valid. False once the message is
    /// complete, and also when it was cut short (the publisher abandoned it, the link closed, or
    /// <paramref name="cancellationToken"/> fired): the caller tells them apart by counting bytes against the message
    /// length. Either way, finish with <see cref="Release"/>.
    /// </summary>
    bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken);

    /// <inheritdoc cref="IMessageReceiver.Reply"/>
    void Reply(ReadOnlySpan<byte> message);

    /// <inheritdoc cref="IMessageReceiver.Release"/>
    void Release();
}

/// <summary>A receiver's hot loop, compiled per transport: <see cref="IMessageReceiver.Run"/> calls it with its path.</summary>
public interface IReceiverLoop
{
    void Run<TPath>(TPath path)
        where TPath : struct, IReceiverPath;
}
