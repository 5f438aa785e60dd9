using System.Buffers.Binary;
using System.IO.Compression;
using System.Numerics;
using HdrHistogram;
using HdrHistogram.Encoding;
using HdrHistogram.Utilities;

namespace IpcBench.Workload;

/// <summary>
/// HdrHistogram's standard compressed (V2) encoding of latency histograms, as agents report them and .hlog lines carry
/// them: a 4-byte cookie, a 4-byte big-endian length, then zlib (RFC 1950 header and deflate) of the library's V2
/// encoding. HistogramEncoding.EncodeIntoCompressedByteBuffer allocates about three times the histogram's counts array
/// per call (~800 KB on the large object heap for the full range, every second in every agent); here the library's V2
/// encoder writes a copy sized to the values actually recorded into reused buffers, and only the deflate step and the
/// library's relevant-counts copy allocate. One thread at a time.
/// </summary>
public sealed class HistogramCodec
{
    // HistogramEncoding's cookie for the compressed V2 form (its base, 0x1c849304, with the V2 word-size bit 0x10).
    private const int CompressedV2Cookie = 0x1c849314;

    // The V2 encoding's own cookie (0x1c849303 with the word-size bit), which EncodeUncompressed leaves in front.
    private const int UncompressedV2Cookie = 0x1c849313;

    // HdrHistogram's layout for the latency histograms' digits: 2 * 10^digits values at unit resolution take
    // 2^ceil(log2) sub-buckets (2^11 for 3 digits), each bucket after the first adds the upper half of them.
    private static readonly int SubBucketHalfCountMagnitude =
        (int)Math.Ceiling(Math.Log2(2 * Math.Pow(10, LatencyHistograms.SignificantDigits))) - 1;

    private static readonly long SubBucketHalfCount = 1L << SubBucketHalfCountMagnitude;

    // RFC 1950 header the library writes and skips (deflate, 32 KB window, no dictionary).
    private static readonly byte[] ZlibHeader = [0x58, 0x85];

    private readonly Dictionary<long, (LongHistogram Histogram, ByteBuffer Buffer)> _bySize = [];
    private readonly MemoryStream _compressed = new();
    private byte[] _uncompressed = [];

    /// <summary>The compressed encoding of <paramref name="source"/>; an empty histogram encodes too (as the smallest size).</summary>
    public byte[] Encode(HistogramBase source)
    {
        int length = EncodeIntoScratch(source);
        var compressed = _compressed;
        compressed.SetLength(0);
        Span<byte> header = stackalloc byte[8];
        BinaryPrimitives.WriteInt32BigEndian(header, CompressedV2Cookie);
        compressed.Write(header);
        compressed.Write(ZlibHeader);
        using (var deflate = new DeflateStream(compressed, CompressionLevel.Optimal, leaveOpen: true))
        {
            deflate.Write(_uncompressed, 0, length);
        }

        var encoded = compressed.ToArray();
        BinaryPrimitives.WriteInt32BigEndian(encoded.AsSpan(4), encoded.Length - 8);
        return encoded;
    }

    /// <summary>
    /// The library's V2 encoding without the zlib layer (its own cookie says so), valid until the next call. Agents
    /// report this way: deflate's native state, made and freed once a second in every agent, was the one native
    /// allocation of the report path while iceoryx2 agents' native memory grew ~30 MiB an hour in a soak.
    /// </summary>
    public ReadOnlySpan<byte> EncodeUncompressed(HistogramBase source)
    {
        // The length first: encoding may replace the scratch array.
        int length = EncodeIntoScratch(source);
        return _uncompressed.AsSpan(0, length);
    }

    /// <summary>Writes the V2 encoding of <paramref name="source"/> into the reused scratch array; returns its length.</summary>
    private int EncodeIntoScratch(HistogramBase source)
    {
        long highest = SizeFor(LatencyHistograms.Max(source));
        if (!_bySize.TryGetValue(highest, out var sized))
        {
            var histogram = new LongHistogram(1, highest, LatencyHistograms.SignificantDigits);
            sized = (histogram, ByteBuffer.Allocate(histogram.GetNeededByteBufferCapacity()));
            _bySize.Add(highest, sized);
        }

        var copy = sized.Histogram;
        copy.Reset();
        foreach (var value in source.RecordedValues())
        {
            copy.RecordValueWithCount(value.ValueIteratedTo, value.CountAtValueIteratedTo);
        }

        var buffer = sized.Buffer;
        buffer.Position = 0;
        int length = copy.Encode(buffer, HistogramEncoderV2.Instance);
        if (_uncompressed.Length < length)
        {
            _uncompressed = new byte[buffer.Capacity()];
        }

        buffer.Position = 0;
        for (int i = 0; i < length; i++)
        {
            // ByteBuffer offers no public bulk read; this is a few KB once a second.
            _uncompressed[i] = buffer.Get();
        }

        return length;
    }

    /// <summary>Decodes what <see cref="Encode"/>, <see cref="EncodeUncompressed"/> (or any HdrHistogram writer) produced; throws <see cref="FormatException"/> on anything else.</summary>
    /// <remarks>
    /// HistogramEncoding.DecodeFromCompressedByteBuffer inflates with a single Stream.Read, which DeflateStream may
    /// answer in part (compressed histograms beyond ~8 KB), and then refuses the histogram. So the container is opened
    /// here (a 4-byte cookie, a 4-byte big-endian length, a 2-byte RFC 1950 header, deflate), inflated to the end, and
    /// the library decodes the V2 encoding inside it, cookie and all.
    /// </remarks>
    public static HistogramBase Decode(ReadOnlySpan<byte> encoded)
    {
        HistogramBase histogram;
        try
        {
            if (encoded.Length >= 4 && BinaryPrimitives.ReadInt32BigEndian(encoded) == UncompressedV2Cookie)
            {
                histogram = HistogramEncoding.DecodeFromByteBuffer(ByteBuffer.Allocate(encoded.ToArray()), 0);
                return CheckRange(histogram);
            }

            int length = encoded.Length >= 8 ? BinaryPrimitives.ReadInt32BigEndian(encoded[4..]) : -1;
            if (length < 2 || length > encoded.Length - 8)
            {
                throw new InvalidDataException($"{encoded.Length} bytes cannot hold a compressed histogram of {length} bytes");
            }

            using var uncompressed = new MemoryStream();
            using (var inflater = new DeflateStream(new MemoryStream(encoded.Slice(10, length - 2).ToArray()), CompressionMode.Decompress))
            {
                inflater.CopyTo(uncompressed);
            }

            histogram = HistogramEncoding.DecodeFromByteBuffer(ByteBuffer.Allocate(uncompressed.ToArray()), 0);
        }
        catch (Exception e) when (e is ArgumentException or NotSupportedException or IndexOutOfRangeException or IOException or InvalidDataException)
        {
            throw new FormatException($"not an HdrHistogram compressed histogram: {e.Message}", e);
        }

        return CheckRange(histogram);
    }

    private static HistogramBase CheckRange(HistogramBase histogram)
    {
        // Added to latency histograms, which cannot take a wider range.
        if (histogram.HighestTrackableValue > LatencyHistograms.HighestTrackableNs)
        {
            throw new FormatException($"its range (up to {histogram.HighestTrackableValue}) is wider than a latency histogram's ({LatencyHistograms.HighestTrackableNs} ns)");
        }

        return histogram;
    }

    /// <summary>
    /// Adds what <paramref name="encoded"/> holds (any form <see cref="Decode"/> reads) into <paramref name="into"/>.
    /// The uncompressed form of a latency histogram, what agents send, is read in place and added value by value: the
    /// library decodes only into a new histogram, whose counts (~100 KB for millisecond maxima) land on the large object
    /// heap once a second per agent, and those allocations gave the daemon, which hosts the publishers, a gen2
    /// collection every ~6 s. On a <see cref="FormatException"/> part of the counts may have been added.
    /// </summary>
    public static void AddTo(ReadOnlySpan<byte> encoded, HistogramBase into)
    {
        try
        {
            if (TryAddUncompressed(encoded, into))
            {
                return;
            }
        }
        catch (Exception e) when (e is IndexOutOfRangeException or ArgumentOutOfRangeException or OverflowException)
        {
            throw new FormatException($"not an HdrHistogram V2 histogram: {e.Message}", e);
        }

        into.Add(Decode(encoded));
    }

    /// <summary>False for anything but the uncompressed V2 form of the latency histograms' own shape (1 ns lowest, <see cref="LatencyHistograms.SignificantDigits"/>, no normalizing offset).</summary>
    private static bool TryAddUncompressed(ReadOnlySpan<byte> encoded, HistogramBase into)
    {
        // Cookie, payload length, normalizing index offset, significant digits (4 bytes each), lowest and highest
        // trackable values, integer-to-double ratio (8 bytes each), all big-endian; then the counts.
        const int HeaderBytes = 40;
        if (encoded.Length < HeaderBytes || BinaryPrimitives.ReadInt32BigEndian(encoded) != UncompressedV2Cookie
            || BinaryPrimitives.ReadInt32BigEndian(encoded[8..]) != 0
            || BinaryPrimitives.ReadInt32BigEndian(encoded[12..]) != LatencyHistograms.SignificantDigits
            || BinaryPrimitives.ReadInt64BigEndian(encoded[16..]) != 1)
        {
            return false;
        }

        int payloadBytes = BinaryPrimitives.ReadInt32BigEndian(encoded[4..]);
        long highest = BinaryPrimitives.ReadInt64BigEndian(encoded[24..]);
        if (payloadBytes < 0 || payloadBytes > encoded.Length - HeaderBytes)
        {
            throw new FormatException($"{encoded.Length} bytes cannot hold a histogram of {payloadBytes} bytes of counts");
        }

        if (highest > into.HighestTrackableValue)
        {
            throw new FormatException($"its range (up to {highest}) is wider than a latency histogram's ({into.HighestTrackableValue} ns)");
        }

        var counts = encoded.Slice(HeaderBytes, payloadBytes);
        int position = 0;
        long index = 0;
        while (position < counts.Length)
        {
            // Positive: the count at this index; -n: n empty buckets; 0: one empty bucket.
            long word = ReadZigZag(counts, ref position);
            if (word < 0)
            {
                index = checked(index - word);
                continue;
            }

            if (word > 0)
            {
                long value = ValueAtIndex(index);
                if (value > highest)
                {
                    throw new FormatException($"a count at {value} ns lies beyond its own range (up to {highest})");
                }

                into.RecordValueWithCount(value, word);
            }

            index++;
        }

        return true;
    }

    /// <summary>
    /// The lowest value counted at <paramref name="index"/> of a histogram whose lowest trackable value is 1: buckets
    /// of <c>SubBucketHalfCount</c> slots after the first, each twice as wide as the one before (HdrHistogram's layout).
    /// </summary>
    private static long ValueAtIndex(long index)
    {
        long bucket = (index >> SubBucketHalfCountMagnitude) - 1;
        long subBucket = (index & (SubBucketHalfCount - 1)) + SubBucketHalfCount;
        if (bucket < 0)
        {
            subBucket -= SubBucketHalfCount;
            bucket = 0;
        }

        return bucket >= 63 - SubBucketHalfCountMagnitude ? long.MaxValue : subBucket << (int)bucket;
    }

    /// <summary>HdrHistogram's ZigZag LEB128-64b9B word: 7 bits a byte for up to eight bytes, then a ninth of 8.</summary>
    private static long ReadZigZag(ReadOnlySpan<byte> bytes, ref int position)
    {
        ulong raw = 0;
        for (int shift = 0; shift < 56; shift += 7)
        {
            byte b = bytes[position++];
            raw |= (ulong)(b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                return (long)(raw >> 1) ^ -(long)(raw & 1);
            }
        }

        raw |= (ulong)bytes[position++] << 56;
        return (long)(raw >> 1) ^ -(long)(raw & 1);
    }

    /// <summary>
    /// A power of two above every value equivalent to <paramref name="maxNs"/>: few distinct sizes, so few cached
    /// histograms, each at most twice as large as needed.
    /// </summary>
    private static long SizeFor(long maxNs) =>
        Math.Min((long)BitOperations.RoundUpToPowerOf2((ulong)Math.Max(maxNs + 1, 4096)), LatencyHistograms.HighestTrackableNs);
}
