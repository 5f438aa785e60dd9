using System.Runtime.Versioning;
using IpcBench.Transports.SharedMemory;

namespace IpcBench.Transports.Tests;

/// <summary>
/// Where a slot's data starts (layout 3): a line after the slot's start wherever the padding costs the slot no line, so
/// a message's payload starts a line and the slot's first line, which readers poll, holds only headers.
/// </summary>
[Collection(nameof(LightRuns))]
[SupportedOSPlatform("linux")]
public class ShmRingSlotLayoutTests
{
    [Fact]
    public void The_padded_header_never_costs_a_slot_a_line_and_puts_the_payload_on_a_line_of_its_own()
    {
        int padded = 0;
        for (int data = MessageHeader.Size; data <= 4 * 1024 + MessageHeader.Size; data++)
        {
            var geometry = new RingGeometry(data, 8, 1, data);
            int header = geometry.SlotHeaderBytes;
            Assert.Equal(RingLayout.AlignUp(RingLayout.SlotHeaderFieldBytes + data, RingLayout.CacheLine), geometry.SlotBytes);
            Assert.True(header + data <= geometry.SlotBytes, $"{data} data bytes overflow a {geometry.SlotBytes}-byte slot");
            if (header == RingLayout.LineSlotHeaderBytes)
            {
                padded++;
                Assert.Equal(0, (header + MessageHeader.Size) % RingLayout.CacheLine);
            }
            else
            {
                Assert.Equal(RingLayout.SlotHeaderFieldBytes, header);
                Assert.True(RingLayout.AlignUp(RingLayout.LineSlotHeaderBytes + data, RingLayout.CacheLine) > geometry.SlotBytes,
                    $"{data} data bytes: the padded header would have fitted the slot");
            }
        }

        // All but the 8 sizes in every 64 where the padding would spill into another line: 3,585 of these 4,097.
        Assert.Equal(3585, padded);
        Assert.Equal((64, 24), (new RingGeometry(MessageHeader.Size + 8, 8, 1, MessageHeader.Size + 8).SlotBytes, RingGeometry.HeaderBytesFor(MessageHeader.Size + 8)));
    }

    [Theory]
    [InlineData(8, 24)]
    [InlineData(1024, 32)]
    [InlineData(64 * 1024, 32)]
    public unsafe void A_loaned_message_sits_where_the_layout_says(int payload, int expectedHeader)
    {
        int message = MessageHeader.Size + payload;
        var transport = new ShmRingTransport(new ShmRingSettings { RingBytes = 1 << 20 });
        var environment = new TransportEnvironment(Path.GetTempPath(), Environment.ProcessId);
        using var publisher = (ShmRingPublisher)transport.CreatePublisher(
            new PublisherOptions(environment, Guid.NewGuid().ToString("N")[..12], 0, 1, 1, 1, message, WaitMode.Spin, false));
        Assert.Equal(expectedHeader, publisher.Geometry.SlotHeaderBytes);

        var loan = publisher.Loan(message);
        fixed (byte* start = loan)
        {
            long slotOffset = (long)start - expectedHeader;
            Assert.Equal(0, slotOffset % RingLayout.CacheLine);
            if (expectedHeader == RingLayout.LineSlotHeaderBytes)
            {
                Assert.Equal(0, ((long)start + MessageHeader.Size) % RingLayout.CacheLine);
            }
            else
            {
                Assert.True(expectedHeader + message <= RingLayout.CacheLine, "an 8 B message's slot is one line");
            }
        }

        publisher.Send();
    }
}
