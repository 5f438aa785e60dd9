using IpcBench.Transports;

namespace IpcBench.Workload;

/// <summary>
/// Writes a message that the transport carries in several segments (a payload larger than one of its slots), in place,
/// segment by segment, with the same bytes and checksum a one-segment message gets. Compiled only into the loops of
/// transports whose <see cref="IPublisherPath.Segmented"/> is true.
/// </summary>
internal static class SegmentedWriter
{
    public static void Write<TPath>(ref TPath path, Span<byte> first, ref MessageHeader header, bool fullPayload)
        where TPath : struct, IPublisherPath
    {
        byte fill = PayloadChecksum.FillByte(header.Sequence, header.PublisherIndex);
        ulong seed = (ulong)header.Sequence;
        if (path.FirstSegmentWritableUntilSend)
        {
            // The header goes last, once the checksum of what was written is known.
            var checksum = new PayloadChecksum.Incremental(header.PayloadLength, seed);
            if (fullPayload)
            {
                checksum.AppendFilling(first[MessageHeader.Size..], fill);
            }

            Span<byte> segment;
            while (!(segment = path.LoanNextSegment()).IsEmpty)
            {
                if (fullPayload)
                {
                    checksum.AppendFilling(segment, fill);
                }
            }

            if (fullPayload)
            {
                header.Checksum = checksum.Finish();
            }

            header.Write(first);
            return;
        }

        // The transport delivers the first segment (which holds the header) before the last is written, so the header
        // is stamped first with the checksum of the pattern about to be written, computed from registers (the same
        // per-block arithmetic, no memory reads). The receiver still reads every byte and checks it against this.
        if (fullPayload)
        {
            header.Checksum = PayloadChecksum.ComputeFilled(header.PayloadLength, fill, seed);
        }

        header.Write(first);
        if (fullPayload)
        {
            first[MessageHeader.Size..].Fill(fill);
        }

        Span<byte> next;
        while (!(next = path.LoanNextSegment()).IsEmpty)
        {
            if (fullPayload)
            {
                next.Fill(fill);
            }
        }
    }
}
