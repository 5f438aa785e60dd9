using System.Buffers;
using Google.Protobuf;
using IpcBench.Transports.GrpcUds.Wire;

namespace IpcBench.Transports.GrpcUds;

/// <summary>The one mapping between the benchmark's 32-byte header and the protobuf message's fields.</summary>
internal static class WireMessages
{
    public static BenchMessage FromHeader(in MessageHeader header, ByteString payload) => new()
    {
        PublisherIndex = header.PublisherIndex,
        Flags = (uint)header.Flags,
        Sequence = header.Sequence,
        SendTimestampNs = header.SendTimestampNs,
        Checksum = header.Checksum,
        Payload = payload,
    };

    /// <summary>The header a receiver verifies, rebuilt from the fields; its payload length is the bytes that arrived.</summary>
    public static void WriteHeader(BenchMessage message, Span<byte> destination) => new MessageHeader
    {
        PayloadLength = message.Payload.Length,
        PublisherIndex = (ushort)message.PublisherIndex,
        Flags = (MessageFlags)message.Flags,
        Sequence = message.Sequence,
        SendTimestampNs = message.SendTimestampNs,
        Checksum = message.Checksum,
    }.Write(destination);
}

/// <summary>
/// A published message on its way to every subscriber stream. Its payload wraps a pooled buffer without a copy; the
/// buffer goes back to the pool when the last stream has written it.
/// </summary>
internal sealed class Outgoing
{
    private readonly byte[] _buffer;
    private int _references = 1;

    public Outgoing(byte[] buffer, int length)
    {
        _buffer = buffer;
        var payload = UnsafeByteOperations.UnsafeWrap(buffer.AsMemory(MessageHeader.Size, length - MessageHeader.Size));
        Message = WireMessages.FromHeader(MessageHeader.Read(buffer), payload);
    }

    public BenchMessage Message { get; }

    public void AddReference() => Interlocked.Increment(ref _references);

    public void Release()
    {
        if (Interlocked.Decrement(ref _references) == 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }
    }
}
