using Google.Protobuf;
using IpcBench.Transports.GrpcUds;
using IpcBench.Transports.GrpcUds.Wire;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>What is particular to grpc-uds: HTTP/2 flow control as the only backpressure, and a publisher stuck on it.</summary>
[Collection(nameof(SerialMeasurements))]
public sealed class GrpcUdsTransportTests : IDisposable
{
    private const int PayloadBytes = 64 * 1024;
    private const int MaxMessage = MessageHeader.Size + PayloadBytes;

    private readonly GrpcUdsTransport _transport = new();
    private readonly TransportEnvironment _environment = new(Directory.CreateTempSubdirectory("ipcbench-grpc-uds-").FullName, Environment.ProcessId);
    private readonly string _key = Guid.NewGuid().ToString("N")[..8];

    public void Dispose() => Directory.Delete(_environment.RuntimeDirectory, recursive: true);

    [Fact]
    public async Task A_subscriber_that_stops_reading_blocks_the_publisher_and_loses_nothing_when_it_reads_again()
    {
        const int messages = 3_000;
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        using var publisher = _transport.CreatePublisher(PublisherOptions());
        using var host = SubscriberHost.Connect(_transport, SubscriberOptions(publisher), new SubscriberPlan(PayloadBytes, true, false, 1), cancel.Token);
        publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(10), cancel.Token);
        var worker = new PublisherWorker(publisher, new PublisherPlan(0, PayloadBytes, true, 0, false, 1, WaitMode.Block, messages), StartedWindow());
        var sending = Task.Factory.StartNew(() => worker.Run(cancel.Token), TaskCreationOptions.LongRunning);

        // Nobody reads yet: the publisher must stall on flow control, not run ahead and drop or buffer without bound.
        long stalledAt = WaitUntilStalled(worker);
        Assert.InRange(stalledAt, 1, messages - 1);

        host.Start();
        await sending.WaitAsync(TimeSpan.FromSeconds(30));
        await host.Completion.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(messages, host.Counters.Received);
        Assert.Equal(0, host.Counters.Lost + host.Counters.Corrupted + host.Counters.Duplicated);
    }

    [Fact]
    public async Task Disposing_a_publisher_blocked_on_a_subscriber_that_never_reads_releases_its_thread_and_its_socket()
    {
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var publisher = _transport.CreatePublisher(PublisherOptions());
        using var host = SubscriberHost.Connect(_transport, SubscriberOptions(publisher), new SubscriberPlan(PayloadBytes, true, false, 1), cancel.Token);
        publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(10), cancel.Token);
        Assert.True(File.Exists(publisher.Address), $"no socket at {publisher.Address}");
        var worker = new PublisherWorker(publisher, new PublisherPlan(0, PayloadBytes, true, 0, false, 1, WaitMode.Block), StartedWindow());
        var sending = Task.Factory.StartNew(() => worker.Run(cancel.Token), TaskCreationOptions.LongRunning);
        WaitUntilStalled(worker);

        var clock = System.Diagnostics.Stopwatch.StartNew();
        publisher.Dispose();

        await Assert.ThrowsAsync<IOException>(() => sending.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5), $"the blocked publisher took {clock.Elapsed} to be released");
        Assert.False(File.Exists(publisher.Address), $"{publisher.Address} is left behind");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(8)]
    [InlineData(1024)]
    public void A_message_carries_its_header_as_about_30_bytes_of_protobuf_fields_beside_the_payload(int payloadBytes)
    {
        var header = new MessageHeader
        {
            PayloadLength = payloadBytes,
            PublisherIndex = 63,
            Flags = MessageFlags.FullPayload,
            Sequence = 123_456_789,
            SendTimestampNs = 987_654_321_012_345,
            Checksum = ulong.MaxValue - 12345,
        };
        var message = WireMessages.FromHeader(header, ByteString.CopyFrom(new byte[payloadBytes]));
        Span<byte> rebuilt = stackalloc byte[MessageHeader.Size];
        WireMessages.WriteHeader(message, rebuilt);

        Assert.InRange(message.CalculateSize() - payloadBytes, 25, 32);
        Assert.Equal(header, MessageHeader.Read(rebuilt));
        Assert.Equal(message, BenchMessage.Parser.ParseFrom(message.ToByteArray()));
    }

    [Fact]
    public void It_declares_block_only_because_every_wait_is_an_awaited_task()
    {
        Assert.Equal([WaitMode.Block], _transport.Capabilities.WaitModes);
        Assert.Equal(WaitMode.Block, _transport.Capabilities.DefaultWaitMode);
        Assert.True(_transport.Capabilities.CrossProcess);
    }

    private static MeasurementWindow StartedWindow()
    {
        var window = new MeasurementWindow();
        window.Start(0);
        return window;
    }

    /// <summary>Waits until the publisher's sent count stops moving for half a second; returns where it stopped.</summary>
    private static long WaitUntilStalled(PublisherWorker worker)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        long last = -1;
        while (DateTime.UtcNow < deadline)
        {
            Thread.Sleep(500);
            long now = worker.Sent;
            if (now == last && now > 0)
            {
                return now;
            }

            last = now;
        }

        throw new Xunit.Sdk.XunitException($"the publisher never stalled (sent {worker.Sent})");
    }

    private PublisherOptions PublisherOptions() => new(_environment, _key, 0, 1, 1, 1, MaxMessage, WaitMode.Block, RoundTrip: false);

    private SubscriberOptions SubscriberOptions(IPublisherEndpoint publisher) =>
        new(_environment, _key, 0, [new PublisherAddress(0, publisher.Address)], 1, 1, MaxMessage, WaitMode.Block, RoundTrip: false);
}
