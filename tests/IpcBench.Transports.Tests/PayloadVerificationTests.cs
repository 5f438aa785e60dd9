using System.Runtime.Intrinsics.X86;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The FULL integrity check end to end: the incremental checksum agrees with the one-shot one however the payload is
/// split, and a flipped payload byte is caught whichever transport carried it and wherever it sits (for shm-ring: in the
/// first, a middle or the last chunk, verified in place in the slot).
/// </summary>
[Collection(nameof(SerialMeasurements))]
public class PayloadVerificationTests
{
    public static TheoryData<string> TransportIds() => new(TransportRegistry.CreateDefault().All.Where(t => t.UnavailableReason is null).Select(t => t.Id));

    [Theory]
    [InlineData(0)]
    [InlineData(7)]
    [InlineData(63)]
    [InlineData(64)]
    [InlineData(65)]
    [InlineData(200)]
    [InlineData(4099)]
    [InlineData(65_536)]
    [InlineData(200_003)]
    public void The_incremental_checksum_matches_the_one_shot_one_wherever_the_pieces_split(int length)
    {
        var random = new Random(length);
        var data = new byte[length];
        random.NextBytes(data);
        ulong expected = PayloadChecksum.Compute(data, 42);
        for (int attempt = 0; attempt < 20; attempt++)
        {
            var checksum = new PayloadChecksum.Incremental(length, 42);
            int offset = 0;
            while (offset < length)
            {
                int piece = Math.Min(length - offset, attempt == 0 ? 1 : random.Next(1, Math.Max(2, length / 3)));
                checksum.Append(data.AsSpan(offset, piece));
                offset += piece;
            }

            Assert.True(checksum.Matches(expected), $"{length} bytes, attempt {attempt}");
        }

        var filled = new byte[length];
        filled.AsSpan().Fill(0xA7);
        Assert.Equal(PayloadChecksum.Compute(filled, 9), PayloadChecksum.ComputeFilled(length, 0xA7, 9));
        var written = new byte[length];
        Assert.Equal(PayloadChecksum.Compute(filled, 9), PayloadChecksum.FillAndCompute(written, 0xA7, 9));
        Assert.Equal(filled, written);
    }

    /// <summary>
    /// The values bench/native/src/checksum.rs pins (its FILLED table): the one-shot, fused and incremental paths all
    /// give them, so the native reference verifies exactly what the C# receiver verifies. The pins are AVX2 values (payloads
    /// of 64 bytes and more go through vector lanes); without AVX2 both sides take the scalar loop, and the paths must
    /// still agree with each other.
    /// </summary>
    [Theory]
    [InlineData(0, 0, 0, 0x0000000000000000UL)]
    [InlineData(7, 3, 0, 0x4cf452b097ee8718UL)]
    [InlineData(8, 5, 1, 0xaacababebd5691adUL)]
    [InlineData(63, 9, 0, 0xc035e348cf5a2822UL)]
    [InlineData(64, 12345, 2, 0xb05e1a3b73313148UL)]
    [InlineData(100, 77, 0, 0x72a8e30c152f0ed7UL)]
    [InlineData(1000, 42, 3, 0x6902698367cd44cdUL)]
    [InlineData(65536, 1000001, 0, 0x7ef1a87b8da5e613UL)]
    [InlineData(524288, 7, 5, 0xe6700690c030ac50UL)]
    public void Every_checksum_path_gives_the_values_the_native_reference_pins(int length, long sequence, int publisher, ulong pinned)
    {
        byte fill = PayloadChecksum.FillByte(sequence, publisher);
        var filled = new byte[length];
        filled.AsSpan().Fill(fill);
        ulong expected = Avx2.IsSupported || length < 64 ? pinned : PayloadChecksum.Compute(filled, (ulong)sequence);
        Assert.Equal(expected, PayloadChecksum.Compute(filled, (ulong)sequence));
        Assert.Equal(expected, PayloadChecksum.ComputeFilled(length, fill, (ulong)sequence));

        var written = new byte[length];
        Assert.Equal(expected, PayloadChecksum.FillAndCompute(written, fill, (ulong)sequence));
        Assert.Equal(filled, written);

        var incremental = new PayloadChecksum.Incremental(length, (ulong)sequence);
        incremental.Append(filled.AsSpan(0, length / 3));
        incremental.AppendFilling(new byte[length - (length / 3)], fill);
        Assert.True(incremental.Matches(expected));
    }

    [Fact]
    public void The_one_shot_checksum_of_patterned_payloads_matches_the_native_reference()
    {
        foreach ((int length, ulong expected) in new[] { (200, 0xd8f220ffb1e423c7UL), (4099, 0xd7cac1af7e7579beUL) })
        {
            var data = new byte[length];
            for (int i = 0; i < length; i++)
            {
                data[i] = (byte)((i * 13) + 5);
            }

            if (Avx2.IsSupported)
            {
                Assert.Equal(expected, PayloadChecksum.Compute(data, 99));
            }
            else
            {
                Assert.NotEqual(PayloadChecksum.Compute(data, 98), PayloadChecksum.Compute(data, 99));
            }
        }
    }

    [Fact]
    public void The_incremental_checksum_refuses_too_few_or_too_many_bytes_and_any_changed_one()
    {
        var data = new byte[1000];
        new Random(1).NextBytes(data);
        ulong expected = PayloadChecksum.Compute(data, 5);

        var shortOne = new PayloadChecksum.Incremental(1000, 5);
        shortOne.Append(data.AsSpan(0, 999));
        Assert.False(shortOne.Matches(expected));

        var longOne = new PayloadChecksum.Incremental(999, 5);
        longOne.Append(data);
        Assert.False(longOne.Matches(PayloadChecksum.Compute(data.AsSpan(0, 999), 5)));

        for (int position = 0; position < data.Length; position += 37)
        {
            data[position] ^= 0x10;
            var changed = new PayloadChecksum.Incremental(1000, 5);
            changed.Append(data.AsSpan(0, 500));
            changed.Append(data.AsSpan(500));
            Assert.False(changed.Matches(expected), $"byte {position} changed");
            data[position] ^= 0x10;
        }
    }

    /// <summary>200,000-byte payloads: four chunks on shm-ring's default 64 KiB slots.</summary>
    [Theory]
    [MemberData(nameof(Corruptions))]
    public void A_flipped_payload_byte_is_counted_as_corrupted(string id, int payloadOffset)
    {
        const int Payload = 200_000;
        const int Messages = 30;
        const long Victim = 17;
        var transport = TransportRegistry.CreateDefault().Find(id)!;
        var outcome = InProcessLoop.Run(transport, publishers: 1, subscribers: 2, Payload, Messages, waitMode: WaitMode.Yield,
            wrapPublisher: inner => new CorruptingPublisher(inner, Victim, MessageHeader.Size + payloadOffset));

        Assert.Equal(2 * Messages, outcome.Received.Received);
        Assert.Equal(2, outcome.Received.Corrupted);

        // The corrupted one is not counted as delivered, so it shows as the one gap in the sequence, too.
        Assert.Equal(2, outcome.Received.Lost);
    }

    public static TheoryData<string, int> Corruptions()
    {
        var data = new TheoryData<string, int>();
        foreach (var id in TransportIds())
        {
            // In the first chunk, in the middle one of a chunk in the middle, and the very last byte.
            data.Add(id, 10);
            data.Add(id, 100_000);
            data.Add(id, 199_999);
        }

        return data;
    }

    /// <summary>
    /// Flips one byte of one message just before the transport takes the segment that holds it, as a stray write would.
    /// It keeps a raw pointer to the segment: shared memory for shm-ring and iceoryx2, pinned or large-object-heap arrays
    /// (never moved; these messages are 200 KB) for the others.
    /// </summary>
    private sealed unsafe class CorruptingPublisher(IPublisherEndpoint inner, long victim, int messageOffset) : IPublisherEndpoint
    {
        private long _message;
        private int _segmentStart;
        private int _segmentLength;
        private byte* _segment;

        public string Address => inner.Address;

        public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken) => inner.WaitForSubscribers(count, timeout, cancellationToken);

        public Span<byte> Loan(int length)
        {
            _segmentStart = 0;
            return Remember(inner.Loan(length));
        }

        public void Send()
        {
            CorruptIfDue();
            _segmentLength = 0;
            inner.Send();
            _message++;
        }

        public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) => inner.TryReceiveReply(out reply, cancellationToken);

        public void ReleaseReply() => inner.ReleaseReply();

        /// <summary>The worker's loop runs over the inner transport's own path, wrapped: still statically dispatched.</summary>
        public void Run(IPublisherLoop loop) => inner.Run(new Wrapping(loop, this));

        public void Dispose() => inner.Dispose();

        private Span<byte> First(Span<byte> segment)
        {
            _segmentStart = 0;
            return Remember(segment);
        }

        private void HandOver()
        {
            CorruptIfDue();
            _segmentStart += _segmentLength;
        }

        private void Sent()
        {
            _segmentLength = 0;
            _message++;
        }

        private Span<byte> Remember(Span<byte> segment)
        {
            _segmentLength = segment.Length;
            _segment = (byte*)System.Runtime.CompilerServices.Unsafe.AsPointer(ref System.Runtime.InteropServices.MemoryMarshal.GetReference(segment));
            return segment;
        }

        private void CorruptIfDue()
        {
            int at = messageOffset - _segmentStart;
            if (_message == victim && at >= 0 && at < _segmentLength)
            {
                _segment[at] ^= 0x40;
            }
        }

        private sealed class Wrapping(IPublisherLoop loop, CorruptingPublisher owner) : IPublisherLoop
        {
            public void Run<TInner>(TInner path)
                where TInner : struct, IPublisherPath => loop.Run(new CorruptingPath<TInner>(path, owner));
        }

        private readonly struct CorruptingPath<TInner>(TInner inner, CorruptingPublisher owner) : IPublisherPath
            where TInner : struct, IPublisherPath
        {
            public bool Segmented => inner.Segmented;

            public bool FirstSegmentWritableUntilSend => inner.FirstSegmentWritableUntilSend;

            public Span<byte> LoanFirstSegment(int length) => owner.First(inner.LoanFirstSegment(length));

            public Span<byte> LoanNextSegment()
            {
                owner.HandOver();
                return owner.Remember(inner.LoanNextSegment());
            }

            public void Send()
            {
                owner.CorruptIfDue();
                inner.Send();
                owner.Sent();
            }

            public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) => inner.TryReceiveReply(out reply, cancellationToken);

            public void ReleaseReply() => inner.ReleaseReply();
        }
    }
}
