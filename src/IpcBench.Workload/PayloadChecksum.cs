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
/// <remarks>
/// <see cref="Incremental"/> gives the same result as <see cref="Compute"/> whatever the pieces, so a receiver can verify
/// a message segment by segment where the transport hands it out in pieces (shm-ring chunks, verified in place) while
/// the publisher or another transport computed it in one go.
/// </remarks>
public static class PayloadChecksum
{
    private const ulong Prime1 = 0x9E3779B185EBCA87UL;
    private const ulong Prime2 = 0xC2B2AE3D27D4EB4FUL;
    private const ulong Prime3 = 0x165667B19E3779F9UL;
    private const int Block = 64;

    /// <summary>The byte a publisher fills its payload with: varies per message so stale payloads are caught too.</summary>
    public static byte FillByte(long sequence, int publisherIndex) => (byte)(sequence * 31 + publisherIndex * 7 + 1);

    /// <summary>The checksum of a payload held in one piece: one pass, no carry-over state.</summary>
    public static ulong Compute(ReadOnlySpan<byte> data, ulong seed)
    {
        ulong hash = Start(data.Length, seed);
        int whole = VectorBytes(data.Length);
        if (whole > 0)
        {
            var lanes = new Lanes(seed);
            lanes.Read(ref MemoryMarshal.GetReference(data), whole);
            hash = lanes.Fold(hash);
        }

        return Avalanche(Tail(hash, data[whole..]));
    }

    /// <summary>
    /// What <see cref="Compute"/> returns for <paramref name="length"/> bytes of <paramref name="fill"/>, computed from
    /// registers (the same per-block arithmetic, no memory reads). A publisher that writes that pattern uses it to stamp
    /// the header before it writes the payload, so it can stream the payload into a transport piece by piece.
    /// </summary>
    public static ulong ComputeFilled(long length, byte fill, ulong seed)
    {
        var checksum = new Incremental(length, seed);
        checksum.AppendRepeated(fill, length);
        return checksum.Finish();
    }

    /// <summary>
    /// Fills <paramref name="payload"/> with <paramref name="fill"/> and returns its checksum in the same pass: the
    /// multiplies run while the stores drain, so writing and checksumming cost little more than writing alone.
    /// </summary>
    public static ulong FillAndCompute(Span<byte> payload, byte fill, ulong seed)
    {
        ulong hash = Start(payload.Length, seed);
        int whole = VectorBytes(payload.Length);
        if (whole > 0)
        {
            var lanes = new Lanes(seed);
            lanes.Fill(ref MemoryMarshal.GetReference(payload), whole, fill);
            hash = lanes.Fold(hash);
        }

        // The tail's checksum comes from registers too: read back from the payload, it would wait for stores to a line
        // this core may not own yet (in shared memory, the subscriber's core last read it) — for small messages that
        // stall was most of a publisher's time.
        var tail = payload[whole..];
        tail.Fill(fill);
        return Avalanche(TailRepeated(hash, fill, tail.Length));
    }

    /// <summary>
    /// The checksum of a payload whose total length is known up front, fed in pieces of any size. Blocks that straddle
    /// two pieces are carried over (at most 63 bytes), so the result never depends on where the pieces split.
    /// </summary>
    public struct Incremental
    {
        private readonly long _length;
        private readonly bool _vector;
        private ulong _hash;
        private Lanes _lanes;
        private long _appended;
        private int _carried;
        private CarryBuffer _carry;

        public Incremental(long length, ulong seed)
        {
            _length = length;
            _hash = Start(length, seed);

            // Short payloads and CPUs without AVX2 take the scalar 8-byte loop from the first byte, as Compute does.
            _vector = VectorBytes(length) > 0;
            if (_vector)
            {
                _lanes = new Lanes(seed);
            }
        }

        /// <summary>Bytes appended so far.</summary>
        public readonly long Appended => _appended;

        public void Append(ReadOnlySpan<byte> data)
        {
            _appended += data.Length;
            int step = _vector ? Block : sizeof(ulong);
            if (_carried > 0)
            {
                int take = Math.Min(step - _carried, data.Length);
                data[..take].CopyTo(((Span<byte>)_carry)[_carried..]);
                _carried += take;
                data = data[take..];
                if (_carried < step)
                {
                    return;
                }

                _carried = 0;
                Blocks(((ReadOnlySpan<byte>)_carry)[..step]);
            }

            int whole = data.Length - (data.Length % step);
            Blocks(data[..whole]);
            data[whole..].CopyTo(_carry);
            _carried = data.Length - whole;
        }

        /// <summary>Appends <paramref name="count"/> copies of <paramref name="value"/> without reading memory.</summary>
        public void AppendRepeated(byte value, long count)
        {
            Span<byte> pattern = stackalloc byte[Block];
            pattern.Fill(value);
            while (count > 0 && (_carried > 0 || !_vector || count < Block))
            {
                int take = (int)Math.Min(count, _carried > 0 ? Block - _carried : Block);
                Append(pattern[..take]);
                count -= take;
            }

            if (count >= Block)
            {
                long blocks = count / Block;
                _appended += blocks * Block;
                _lanes.Repeat(value, blocks);
                count -= blocks * Block;
                Append(pattern[..(int)count]);
            }
        }

        /// <summary>Writes <paramref name="value"/> over <paramref name="destination"/> and appends what it wrote.</summary>
        public void AppendFilling(Span<byte> destination, byte value)
        {
            if (!_vector)
            {
                destination.Fill(value);
                Append(destination);
                return;
            }

            if (_carried > 0)
            {
                // Complete the block the previous piece left open, then go on in whole blocks.
                var head = destination[..Math.Min(Block - _carried, destination.Length)];
                head.Fill(value);
                Append(head);
                destination = destination[head.Length..];
                if (_carried > 0)
                {
                    return;
                }
            }

            int whole = destination.Length - (destination.Length % Block);
            _lanes.Fill(ref MemoryMarshal.GetReference(destination), whole, value);
            _appended += whole;
            var rest = destination[whole..];
            rest.Fill(value);
            Append(rest);
        }

        /// <summary>The checksum, or a value that matches nothing useful if fewer or more bytes came than announced.</summary>
        public readonly ulong Finish()
        {
            ulong hash = _vector ? _lanes.Fold(_hash) : _hash;
            hash = Avalanche(Tail(hash, ((ReadOnlySpan<byte>)_carry)[.._carried]));
            return _appended == _length ? hash : ~hash;
        }

        /// <summary>True when exactly the announced number of bytes came and they hash to <paramref name="expected"/>.</summary>
        public readonly bool Matches(ulong expected) => _appended == _length && Finish() == expected;

        private void Blocks(ReadOnlySpan<byte> data)
        {
            if (_vector)
            {
                _lanes.Read(ref MemoryMarshal.GetReference(data), data.Length);
            }
            else
            {
                _hash = Words(_hash, data);
            }
        }
    }

    /// <summary>
    /// The vector accumulators: two 256-bit lanes of four 64-bit sums, each with its own position-dependent keys, fed
    /// 64-byte blocks. Where AVX-512 is there both lanes sit side by side in one register: the same arithmetic, half the
    /// instructions.
    /// </summary>
    private struct Lanes
    {
        private Vector256<ulong> _accA;
        private Vector256<ulong> _accB;
        private Vector256<ulong> _keyA;
        private Vector256<ulong> _keyB;

        public Lanes(ulong seed)
        {
            _accA = Vector256.Create(seed, seed ^ Prime1, seed ^ Prime2, ~seed);
            _accB = Vector256.Create(~seed ^ Prime3, seed + Prime3, seed ^ Prime3, seed - Prime1);
            _keyA = Vector256.Create(Prime1, Prime2, Prime3, Prime1 ^ Prime2);
            _keyB = Vector256.Create(Prime2 ^ Prime3, Prime3 ^ Prime1, Prime2, Prime3 ^ 0x5555555555555555UL);
        }

        /// <summary>Reads <paramref name="length"/> bytes (whole blocks) from <paramref name="start"/>.</summary>
        public void Read(ref byte start, int length) => Mix(new FromMemory(), ref start, length / Block);

        /// <summary>Writes <paramref name="value"/> over <paramref name="length"/> bytes (whole blocks) and reads them from registers.</summary>
        public void Fill(ref byte start, int length, byte value) => Mix(new Filling(value), ref start, length / Block);

        /// <summary>Reads <paramref name="blocks"/> blocks of <paramref name="value"/> from registers alone.</summary>
        public void Repeat(byte value, long blocks) => Mix(new Pattern(value), ref Unsafe.NullRef<byte>(), blocks);

        /// <summary>
        /// The one block loop: <typeparamref name="TSource"/> (a struct, so the JIT compiles a copy of the loop per source
        /// with its loads or stores inlined) says where each block's bytes come from.
        /// </summary>
        private void Mix<TSource>(TSource source, ref byte start, long blocks)
            where TSource : struct, IBlockSource
        {
            if (Avx512F.IsSupported)
            {
                // Both lanes side by side in one register: the same arithmetic, half the instructions.
                var acc = Vector512.Create(_accA, _accB);
                var key = Vector512.Create(_keyA, _keyB);
                var step512 = Vector512.Create(Prime3);
                for (long i = 0; i < blocks; i++)
                {
                    acc += PayloadChecksum.Mix(source.Block(ref start, (nuint)(i * Block)), key);
                    key += step512;
                }

                (_accA, _accB, _keyA, _keyB) = (acc.GetLower(), acc.GetUpper(), key.GetLower(), key.GetUpper());
                return;
            }

            // Locals, not fields, so the loop keeps everything in registers.
            var accA = _accA;
            var accB = _accB;
            var keyA = _keyA;
            var keyB = _keyB;
            var step = Vector256.Create(Prime3);
            for (long i = 0; i < blocks; i++)
            {
                nuint offset = (nuint)(i * Block);
                accA += PayloadChecksum.Mix(source.Half(ref start, offset), keyA);
                accB += PayloadChecksum.Mix(source.Half(ref start, offset + 32), keyB);
                keyA += step;
                keyB += step;
            }

            (_accA, _accB, _keyA, _keyB) = (accA, accB, keyA, keyB);
        }

        public readonly ulong Fold(ulong hash) => Fold(_accB, Fold(_accA, hash));

        private static ulong Fold(Vector256<ulong> accumulator, ulong hash)
        {
            for (int lane = 0; lane < Vector256<ulong>.Count; lane++)
            {
                hash = BitOperations.RotateLeft(hash ^ (accumulator.GetElement(lane) * Prime2), 27) * Prime1;
            }

            return hash;
        }
    }

    /// <summary>Bytes of a payload of <paramref name="length"/> that go through the vector lanes (whole blocks), 0 if none do.</summary>
    private static int VectorBytes(long length) => Avx2.IsSupported && length >= Block ? (int)(length - (length % Block)) : 0;

    private static ulong Start(long length, ulong seed) => seed ^ ((ulong)length * Prime1);

    /// <summary>The 8-byte words of <paramref name="data"/> (a trailing partial word is left out).</summary>
    private static ulong Words(ulong hash, ReadOnlySpan<byte> data)
    {
        ref byte start = ref MemoryMarshal.GetReference(data);
        for (int offset = 0; offset <= data.Length - sizeof(ulong); offset += sizeof(ulong))
        {
            hash = Scalar(hash, Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, offset)));
        }

        return hash;
    }

    /// <summary>What the vector lanes left: whole words, then single bytes.</summary>
    private static ulong Tail(ulong hash, ReadOnlySpan<byte> tail)
    {
        hash = Words(hash, tail);
        for (int offset = tail.Length - (tail.Length % sizeof(ulong)); offset < tail.Length; offset++)
        {
            hash = BitOperations.RotateLeft(hash ^ (tail[offset] * Prime3), 11) * Prime1;
        }

        return hash;
    }

    /// <summary>What <see cref="Tail"/> returns for <paramref name="length"/> bytes of <paramref name="fill"/>, without reading them.</summary>
    private static ulong TailRepeated(ulong hash, byte fill, int length)
    {
        ulong word = fill * 0x0101010101010101UL;
        int words = length / sizeof(ulong);
        for (int i = 0; i < words; i++)
        {
            hash = Scalar(hash, word);
        }

        for (int offset = words * sizeof(ulong); offset < length; offset++)
        {
            hash = BitOperations.RotateLeft(hash ^ (fill * Prime3), 11) * Prime1;
        }

        return hash;
    }

    /// <summary>Where the lanes' blocks come from: a whole 64-byte block, or one of its 32-byte halves.</summary>
    private interface IBlockSource
    {
        Vector512<ulong> Block(ref byte start, nuint offset);

        Vector256<ulong> Half(ref byte start, nuint offset);
    }

    /// <summary>The bytes in memory.</summary>
    private readonly struct FromMemory : IBlockSource
    {
        public Vector512<ulong> Block(ref byte start, nuint offset) => Vector512.LoadUnsafe(ref start, offset).AsUInt64();

        public Vector256<ulong> Half(ref byte start, nuint offset) => Vector256.LoadUnsafe(ref start, offset).AsUInt64();
    }

    /// <summary>A repeated byte, from registers: no memory is touched.</summary>
    private readonly struct Pattern(byte value) : IBlockSource
    {
        private readonly Vector512<byte> _block = Vector512.Create(value);
        private readonly Vector256<byte> _half = Vector256.Create(value);

        public Vector512<ulong> Block(ref byte start, nuint offset) => _block.AsUInt64();

        public Vector256<ulong> Half(ref byte start, nuint offset) => _half.AsUInt64();
    }

    /// <summary>A repeated byte, written to memory as it is read from registers (the publisher's fused fill).</summary>
    private readonly struct Filling(byte value) : IBlockSource
    {
        private readonly Vector512<byte> _block = Vector512.Create(value);
        private readonly Vector256<byte> _half = Vector256.Create(value);

        public Vector512<ulong> Block(ref byte start, nuint offset)
        {
            _block.StoreUnsafe(ref start, offset);
            return _block.AsUInt64();
        }

        public Vector256<ulong> Half(ref byte start, nuint offset)
        {
            _half.StoreUnsafe(ref start, offset);
            return _half.AsUInt64();
        }
    }

    [InlineArray(Block)]
    private struct CarryBuffer
    {
        private byte _element;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Scalar(ulong hash, ulong word) => BitOperations.RotateLeft(hash ^ (word * Prime2), 31) * Prime1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector256<ulong> Mix(Vector256<ulong> data, Vector256<ulong> key)
    {
        var keyed = data ^ key;
        var product = Avx2.Multiply(keyed.AsUInt32(), Avx2.ShiftRightLogical(keyed, 32).AsUInt32());
        return product + data;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector512<ulong> Mix(Vector512<ulong> data, Vector512<ulong> key)
    {
        var keyed = data ^ key;
        var product = Avx512F.Multiply(keyed.AsUInt32(), Avx512F.ShiftRightLogical(keyed, 32).AsUInt32());
        return product + data;
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
