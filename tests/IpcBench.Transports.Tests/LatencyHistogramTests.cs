using System.Runtime.CompilerServices;
using HdrHistogram;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>The HdrHistogram-based recording, interval reading and encoding every latency result goes through.</summary>
[Collection(nameof(SerialMeasurements))]
public class LatencyHistogramTests
{
    /// <summary>The least of three identical runs after a first one (<see cref="ThreadAllocations.LeastOf"/>).</summary>
    [Fact]
    public void RecordLatency_InTheHotLoop_AllocatesNothing()
    {
        var histogram = LatencyHistograms.Create();

        Assert.Equal(0, ThreadAllocations.LeastOf(3, () => RecordAcrossTheRange(histogram)));
        Assert.Equal(4_000_000, histogram.TotalCount);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void RecordAcrossTheRange(LongHistogram histogram)
    {
        long value = 1;
        for (int i = 0; i < 1_000_000; i++)
        {
            // Values across the whole range, as a receive loop sees them (ns to seconds).
            value = value * 6364136223846793005 + 1442695040888963407;
            histogram.RecordLatency((value >>> 40) << (i & 15));
        }
    }

    [Fact]
    public void RecordLatency_ClampsValuesOutsideTheRange_InsteadOfThrowing()
    {
        var histogram = LatencyHistograms.Create();
        histogram.RecordLatency(-5);
        histogram.RecordLatency(long.MaxValue);

        Assert.Equal(2, histogram.TotalCount);
        Assert.Equal(0, LatencyHistograms.Min(histogram));
        Assert.True(LatencyHistograms.Max(histogram) >= LatencyHistograms.HighestTrackableNs);
    }

    [Fact]
    public void Statistics_KeepThreeSignificantDigits_AndAreZeroWhenEmpty()
    {
        var empty = LatencyHistograms.Create();
        Assert.Equal(0, LatencyHistograms.Percentile(empty, 99));
        Assert.Equal(0, LatencyHistograms.Min(empty));
        Assert.Equal(0, LatencyHistograms.Max(empty));
        Assert.Equal(0, LatencyHistograms.Mean(empty));

        var histogram = LatencyHistograms.Create();
        for (long ns = 1; ns <= 1_000_000; ns++)
        {
            histogram.RecordLatency(ns * 7);
        }

        // Exact below 2048 ns, within 0.1 % above: what p50/p99/p99.9 in results rely on.
        Assert.Equal(7, LatencyHistograms.Min(histogram));
        AssertWithin(3_500_000, LatencyHistograms.Percentile(histogram, 50));
        AssertWithin(6_930_000, LatencyHistograms.Percentile(histogram, 99));
        AssertWithin(6_993_000, LatencyHistograms.Percentile(histogram, 99.9));
        AssertWithin(7_000_000, LatencyHistograms.Max(histogram));
        AssertWithin(3_500_003.5, LatencyHistograms.Mean(histogram));
        AssertWithin(3_500_003.5 * 1_000_000, LatencyHistograms.Sum(histogram));
    }

    [Fact]
    public void IntervalReader_WhileAnotherThreadRecords_ReportsEveryValueExactlyOnce()
    {
        var live = LatencyHistograms.Create();
        var reader = new IntervalHistogramReader(live);
        var total = LatencyHistograms.Create();
        var interval = LatencyHistograms.Create();
        const int Values = 2_000_000;
        var writer = new Thread(() =>
        {
            for (int i = 0; i < Values; i++)
            {
                live.RecordLatency(50 + (i % 100_000));
            }
        });
        writer.Start();
        int intervals = 0;
        while (writer.IsAlive)
        {
            interval.Reset();
            reader.ReadInterval(interval);
            total.Add(interval);
            intervals++;
        }

        writer.Join();
        reader.ReadInterval(total);

        Assert.True(intervals > 1, "the writer finished before a second interval; the test proves nothing");
        Assert.Equal(Values, total.TotalCount);
        for (long value = 50; value < 100_050; value += 997)
        {
            Assert.Equal(live.GetCountAtValue(value), total.GetCountAtValue(value));
        }

        // Nothing new: an empty interval.
        interval.Reset();
        reader.ReadInterval(interval);
        Assert.Equal(0, interval.TotalCount);
    }

    [Theory]
    [InlineData(900L, true)]
    [InlineData(80_000L, true)]
    [InlineData(LatencyHistograms.HighestTrackableNs, true)]
    [InlineData(900L, false)]
    [InlineData(80_000L, false)]
    [InlineData(LatencyHistograms.HighestTrackableNs, false)]
    public void Codec_RoundTripsBothEncodings_WithTheSameStatistics(long largest, bool compressed)
    {
        var histogram = LatencyHistograms.Create();
        for (long ns = 1; ns <= 20_000; ns++)
        {
            histogram.RecordLatency(ns * largest / 20_000);
        }

        var codec = new HistogramCodec();
        byte[] Encode() => compressed ? codec.Encode(histogram) : codec.EncodeUncompressed(histogram).ToArray();
        var encoded = Encode();
        var decoded = HistogramCodec.Decode(encoded);

        // What the daemon does with it: added into a full-range histogram.
        var merged = LatencyHistograms.Create();
        merged.Add(decoded);
        Assert.Equal(histogram.TotalCount, merged.TotalCount);
        foreach (var percentile in new[] { 0.0, 50, 90, 99, 99.9, 100 })
        {
            Assert.Equal(LatencyHistograms.Percentile(histogram, percentile), LatencyHistograms.Percentile(merged, percentile));
        }

        Assert.Equal(LatencyHistograms.Min(histogram), LatencyHistograms.Min(merged));
        Assert.Equal(LatencyHistograms.Max(histogram), LatencyHistograms.Max(merged));
        Assert.Equal(LatencyHistograms.Mean(histogram), LatencyHistograms.Mean(merged));

        // The library's own decoder reads it too (it is the standard encoding, not ours).
        var buffer = HdrHistogram.Utilities.ByteBuffer.Allocate(encoded);
        var standard = compressed ? HistogramEncoding.DecodeFromCompressedByteBuffer(buffer, 0) : HistogramEncoding.DecodeFromByteBuffer(buffer, 0);
        Assert.Equal(histogram.TotalCount, standard.TotalCount);

        // Reused: the same encoding again.
        Assert.Equal(encoded, Encode());
    }

    [Theory]
    [InlineData(900L, false)]
    [InlineData(80_000L, false)]
    [InlineData(LatencyHistograms.HighestTrackableNs, false)]
    [InlineData(80_000L, true)]
    public void Codec_AddTo_AddsEveryCountAtItsValue_AsTheLibrarysDecoderDoes(long largest, bool compressed)
    {
        var histogram = LatencyHistograms.Create();
        var random = new Random(7);
        for (int i = 0; i < 20_000; i++)
        {
            histogram.RecordValueWithCount(1 + (long)(random.NextDouble() * largest), 1 + random.Next(3));
        }

        var codec = new HistogramCodec();
        var encoded = compressed ? codec.Encode(histogram) : codec.EncodeUncompressed(histogram).ToArray();
        var into = LatencyHistograms.Create();
        into.RecordValue(5);
        HistogramCodec.AddTo(encoded, into);
        HistogramCodec.AddTo(encoded, into);

        var expected = LatencyHistograms.Create();
        expected.RecordValue(5);
        var decoded = HistogramEncoding.DecodeFromByteBuffer(HdrHistogram.Utilities.ByteBuffer.Allocate(codec.EncodeUncompressed(histogram).ToArray()), 0);
        expected.Add(decoded);
        expected.Add(decoded);
        Assert.Equal(expected.TotalCount, into.TotalCount);
        foreach (var value in expected.RecordedValues())
        {
            Assert.Equal(value.CountAtValueIteratedTo, into.GetCountAtValue(value.ValueIteratedTo));
        }

        Assert.Equal(expected.RecordedValues().Count(), into.RecordedValues().Count());
    }

    [Fact]
    public void Codec_AddTo_OfTheUncompressedForm_AllocatesNothing()
    {
        var histogram = LatencyHistograms.Create();
        for (long ns = 0; ns < 50_000; ns++)
        {
            histogram.RecordLatency(300 + (ns * ns % 4_000_000));
        }

        var encoded = new HistogramCodec().EncodeUncompressed(histogram).ToArray();
        var into = LatencyHistograms.Create();

        // The library's decoder would have allocated a histogram of the encoded range: > 85,000 B, the large object heap.
        Assert.Equal(0, ThreadAllocations.LeastOf(3, () => HistogramCodec.AddTo(encoded, into)));
        Assert.Equal(4 * histogram.TotalCount, into.TotalCount);
    }

    [Fact]
    public void Codec_AddTo_RefusesATruncatedOrOutOfRangeHistogram()
    {
        var histogram = LatencyHistograms.Create();
        histogram.RecordValue(1_000);
        histogram.RecordValue(900_000);
        var encoded = new HistogramCodec().EncodeUncompressed(histogram).ToArray();

        // Counts cut off: the declared payload length is longer than what is there.
        Assert.Throws<FormatException>(() => HistogramCodec.AddTo(encoded[..^2], LatencyHistograms.Create()));

        // A range wider than the histogram added into.
        var narrow = new LongHistogram(1, 100_000, LatencyHistograms.SignificantDigits);
        Assert.Throws<FormatException>(() => HistogramCodec.AddTo(encoded, narrow));

        // A count past the range it declares: the header says up to 4,096 ns, a count sits at 900 µs.
        var lying = (byte[])encoded.Clone();
        System.Buffers.Binary.BinaryPrimitives.WriteInt64BigEndian(lying.AsSpan(24), 4_096);
        Assert.Throws<FormatException>(() => HistogramCodec.AddTo(lying, LatencyHistograms.Create()));
    }

    [Fact]
    public void Codec_DecodesAWideHistogram_WhoseCompressedFormIsLargerThanOneInflateRead()
    {
        // Every bucket from 1 ns to ~2 s holds a different count: tens of KB compressed, which the library's own
        // compressed decoder refuses ("does not contain the indicated payload amount") after one partial read.
        var histogram = LatencyHistograms.Create();
        var random = new Random(42);
        for (long ns = 1; ns < 2_000_000_000; ns += 1 + ns / 1000)
        {
            histogram.RecordValueWithCount(ns, 1 + random.Next(1_000_000));
        }

        var encoded = new HistogramCodec().Encode(histogram);
        Assert.True(encoded.Length > 16_384, $"only {encoded.Length} B compressed: not the case this test is for");
        Assert.ThrowsAny<ArgumentException>(() => HistogramEncoding.DecodeFromCompressedByteBuffer(HdrHistogram.Utilities.ByteBuffer.Allocate(encoded), 0));
        var decoded = HistogramCodec.Decode(encoded);

        Assert.Equal(histogram.TotalCount, decoded.TotalCount);
        Assert.Equal(LatencyHistograms.Percentile(histogram, 99.9), LatencyHistograms.Percentile(decoded, 99.9));
    }

    [Fact]
    public void Codec_ForMicrosecondLatencies_AllocatesAFifthOfTheLibrarysFullRangeEncoding()
    {
        var histogram = LatencyHistograms.Create();
        for (long ns = 0; ns < 50_000; ns++)
        {
            histogram.RecordLatency(300 + (ns * ns % 40_000));
        }

        var codec = new HistogramCodec();
        codec.Encode(histogram);
        long before = GC.GetAllocatedBytesForCurrentThread();
        codec.Encode(histogram);
        long trimmed = GC.GetAllocatedBytesForCurrentThread() - before;

        before = GC.GetAllocatedBytesForCurrentThread();
        histogram.EncodeIntoCompressedByteBuffer(HdrHistogram.Utilities.ByteBuffer.Allocate(histogram.GetNeededByteBufferCapacity()));
        long fullRange = GC.GetAllocatedBytesForCurrentThread() - before;

        // Once a second per agent: a 2 cores machine's agents should not churn hundreds of KB for it.
        Assert.True(trimmed < 100_000, $"encoding allocated {trimmed} B (the library's full range encoding: {fullRange} B)");
        Assert.True(trimmed * 5 < fullRange, $"encoding allocated {trimmed} B, the library's full range encoding {fullRange} B");
    }

    [Fact]
    public void Codec_Decode_RefusesWhatIsNotAnHdrHistogram()
    {
        Assert.Throws<FormatException>(() => HistogramCodec.Decode([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
        Assert.Throws<FormatException>(() => HistogramCodec.Decode([]));
    }

    private static void AssertWithin(double expected, double actual) =>
        Assert.True(Math.Abs(actual - expected) <= expected / 1000, $"{actual} is not within 0.1 % of {expected}");
}
