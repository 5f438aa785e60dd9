using System.Buffers.Binary;
using System.Runtime.InteropServices;

namespace IpcBench.Iceoryx2.TestPeer;

/// <summary>Deterministic payload content derived from a sequence number (checked byte for byte by the receiver).</summary>
public static class Pattern
{
    private const ulong Golden = 0x9E3779B97F4A7C15;

    public static void Fill(Span<byte> payload, ulong seq)
    {
        int words = payload.Length / 8;
        var w = MemoryMarshal.Cast<byte, ulong>(payload[..(words * 8)]);
        ulong baseValue = seq * Golden;
        for (int k = 0; k < w.Length; k++)
        {
            w[k] = baseValue + (ulong)k;
        }

        if (words > 0)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(payload, seq);
        }

        for (int i = words * 8; i < payload.Length; i++)
        {
            payload[i] = (byte)(seq + (ulong)i);
        }
    }

    /// <summary>Returns the sequence number the payload claims (first 8 bytes, or -1 when shorter).</summary>
    public static long SequenceOf(ReadOnlySpan<byte> payload) =>
        payload.Length >= 8 ? (long)BinaryPrimitives.ReadUInt64LittleEndian(payload) : -1;

    public static bool Verify(ReadOnlySpan<byte> payload, ulong seq)
    {
        int words = payload.Length / 8;
        var w = MemoryMarshal.Cast<byte, ulong>(payload[..(words * 8)]);
        ulong baseValue = seq * Golden;
        if (words > 0 && w[0] != seq)
        {
            return false;
        }

        for (int k = 1; k < w.Length; k++)
        {
            if (w[k] != baseValue + (ulong)k)
            {
                return false;
            }
        }

        for (int i = words * 8; i < payload.Length; i++)
        {
            if (payload[i] != (byte)(seq + (ulong)i))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>The options both sides of the cross-process test use (they must be identical in every process).</summary>
    public static PublishSubscribeOptions CrossProcessOptions(int size) => new()
    {
        MaxMessageSize = size,
        MaxPublishers = 1,
        MaxSubscribers = 2,
        MaxNodes = 4,
        SubscriberBufferSize = 64,
        SubscriberMaxBorrowedSamples = 4,
        PublisherMaxLoanedSamples = 2,
        DeliveryMode = DeliveryMode.NoLoss,
    };
}
