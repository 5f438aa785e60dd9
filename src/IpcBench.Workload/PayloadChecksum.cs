using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace IpcBench.Workload;

/// <summary>
/// A fast 64-bit checksum over every payload byte, seeded with the sequence number so a stale or misrouted payload
/// fails too. Not cryptographic: it exists to catch torn, stale and overwritten messages at memory bandwidth.
/// The vector loop multiplies 32-bit halves per 64-bit lane (as xxHash3 does) with position-dependent keys, so
/// reordered blocks change the result.
/// </summary>
public static class PayloadChecksum
{
    private const ulong Prime1 = 0x9E3779B185EBCA87UL;
    private const ulong Prime2 = 0xC2B2AE3D27D4EB4FUL;
    private const ulong Prime3 = 0x165667B19E3779F9UL;

    /// <summary>The byte a publisher fills its payload with: varies per message so stale payloads are caught too.</summary>
    public static byte FillByte(long sequence, int publisherIndex) => (byte)(sequence * 31 + publisherIndex * 7 + 1);

    public static ulong Compute(ReadOnlySpan<byte> data, ulong seed)
    {
        ulong hash = seed ^ ((ulong)data.Length * Prime1);
        int offset = 0;
        ref byte start = ref MemoryMarshal.GetReference(data);

        if (Avx2.IsSupported && data.Length >= 64)
        {
            var accA = Vector256.Create(seed, seed ^ Prime1, seed ^ Prime2, ~seed);
            var accB = Vector256.Create(~seed ^ Prime3, seed + Prime3, seed ^ Prime3, seed - Prime1);
            var keyA = Vector256.Create(Prime1, Prime2, Prime3, Prime1 ^ Prime2);
            var keyB = Vector256.Create(Prime2 ^ Prime3, Prime3 ^ Prime1, Prime2, Prime3 ^ 0x5555555555555555UL);
            var step = Vector256.Create(Prime3);
            for (; offset <= data.Length - 64; offset += 64)
            {
                var dataA = Vector256.LoadUnsafe(ref start, (nuint)offset).AsUInt64();
                var dataB = Vector256.LoadUnsafe(ref start, (nuint)offset + 32).AsUInt64();
                accA += Mix(dataA, keyA);
                accB += Mix(dataB, keyB);
                keyA += step;
                keyB += step;
            }

            hash = Fold(accA, hash);
            hash = Fold(accB, hash);
        }

        for (; offset <= data.Length - 8; offset += 8)
        {
            ulong word = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, offset));
            hash = BitOperations.RotateLeft(hash ^ (word * Prime2), 31) * Prime1;
        }

        for (; offset < data.Length; offset++)
        {
            hash = BitOperations.RotateLeft(hash ^ (Unsafe.Add(ref start, offset) * Prime3), 11) * Prime1;
        }

        return Avalanche(hash);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector256<ulong> Mix(Vector256<ulong> data, Vector256<ulong> key)
    {
        var keyed = data ^ key;
        var product = Avx2.Multiply(keyed.AsUInt32(), Avx2.ShiftRightLogical(keyed, 32).AsUInt32());
        return product + data;
    }

    private static ulong Fold(Vector256<ulong> accumulator, ulong hash)
    {
        for (int lane = 0; lane < Vector256<ulong>.Count; lane++)
        {
            hash = BitOperations.RotateLeft(hash ^ (accumulator.GetElement(lane) * Prime2), 27) * Prime1;
        }

        return hash;
    }

    private static ulong Avalanche(ulong hash)
    {
        hash ^= hash >> 33;
        hash *= Prime2;
        hash ^= hash >> 29;
        hash *= Prime3;
        hash ^= hash >> 32;
        return hash;
    }
}
