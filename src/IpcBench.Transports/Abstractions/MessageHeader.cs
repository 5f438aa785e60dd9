using System.Buffers.Binary;
using System.Runtime.InteropServices;

namespace IpcBench.Transports;

/// <summary>
/// The 32 bytes every message carries in front of its payload, on every transport. Stream transports use
/// <see cref="PayloadLength"/> as their frame length, so they add nothing else on the wire.
/// </summary>
[StructLayout(LayoutKind.Sequential, Pack = 1)]
public struct MessageHeader
{
    public const int Size = 32;

    public int PayloadLength;
    public ushort PublisherIndex;
    public MessageFlags Flags;
    public long Sequence;

    /// <summary>CLOCK_MONOTONIC nanoseconds, comparable across processes; the intended send time when rate-limited.</summary>
    public long SendTimestampNs;

    /// <summary>Checksum of the payload seeded with the sequence number; 0 when the payload is not written.</summary>
    public ulong Checksum;

    /// <summary>A whole message's bytes, header included: the one size formula.</summary>
    public static int MessageBytes(int payloadBytes) => Size + payloadBytes;

    public static MessageHeader Read(ReadOnlySpan<byte> message) => MemoryMarshal.Read<MessageHeader>(message);

    public readonly void Write(Span<byte> message) => MemoryMarshal.Write(message, in this);

    /// <summary>Reads only the frame length, for transports that delimit messages in a byte stream.</summary>
    public static int ReadPayloadLength(ReadOnlySpan<byte> message) => BinaryPrimitives.ReadInt32LittleEndian(message);
}

[Flags]
public enum MessageFlags : ushort
{
    None = 0,

    /// <summary>The publisher's last message: it sent nothing after this.</summary>
    EndOfStream = 1,

    /// <summary>The payload was written and the checksum is meaningful.</summary>
    FullPayload = 2,

    /// <summary>
    /// The receiver measures this message's latency (one in <c>latency_sample_every</c>); the others carry the last
    /// sampled stamp, close enough to place them in or out of the measured window.
    /// </summary>
    LatencySample = 4,

    /// <summary>
    /// Sent inside the measured window (its stamp at or after the window's start): receivers count it toward throughput
    /// and latency. The publisher decides, so the window may start whenever the daemon chooses (once code generation
    /// has settled) without telling every receiver first.
    /// </summary>
    Measured = 8,
}
