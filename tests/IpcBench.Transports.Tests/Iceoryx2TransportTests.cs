using System.Diagnostics;
using IpcBench.Iceoryx2;
using IpcBench.Transports.Iceoryx2;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The iceoryx2 transport below the engine, on threads of this process: every wait mode and topology, round trips,
/// clear errors for bad input (oversized payloads, more ports than the scenario declared, shared memory that cannot
/// fit), a stalled subscriber that must not hang its publisher forever, and disposal from another thread while a port
/// is in use (which would crash the process if the native port were freed under it).
/// </summary>
[Collection(nameof(SerialMeasurements))]
public class Iceoryx2TransportTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    public static TheoryData<WaitMode> WaitModes => [WaitMode.Spin, WaitMode.Yield, WaitMode.Block];

    [Iceoryx2Fact]
    public void Is_registered_as_a_cross_process_zero_copy_transport_with_every_wait_mode()
    {
        var transport = TransportRegistry.CreateDefault().Find("iceoryx2");

        Assert.NotNull(transport);
        Assert.Null(transport.UnavailableReason);
        Assert.True(transport.Capabilities.CrossProcess);
        Assert.True(transport.Capabilities.ZeroCopy);
        Assert.True(transport.Capabilities.SupportsRoundTrip);
        Assert.Equal([WaitMode.Spin, WaitMode.Yield, WaitMode.Block], transport.Capabilities.WaitModes);
        Assert.Equal(WaitMode.Yield, transport.Capabilities.DefaultWaitMode);
    }

    [Iceoryx2Theory]
    [MemberData(nameof(WaitModes))]
    public void All_to_all_2x2_delivers_everything_in_every_wait_mode(WaitMode mode)
    {
        var outcome = InProcessLoop.Run(new Iceoryx2Transport(), publishers: 2, subscribers: 2, payloadBytes: 64 * 1024, messagesPerPublisher: 1_000, waitMode: mode);

        Assert.Equal(2_000, outcome.Sent);
        Assert.Equal(4_000, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Lost + outcome.Received.Corrupted + outcome.Received.Duplicated);
    }

    [Iceoryx2Theory]
    [MemberData(nameof(WaitModes))]
    public void Paired_3x3_delivers_each_publisher_to_its_own_subscriber(WaitMode mode)
    {
        var outcome = InProcessLoop.Run(new Iceoryx2Transport(), publishers: 3, subscribers: 3, payloadBytes: 8, messagesPerPublisher: 5_000, waitMode: mode, paired: true);

        Assert.Equal(15_000, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Lost + outcome.Received.Corrupted + outcome.Received.Duplicated);
    }

    /// <remarks>
    /// Under SPIN both threads of a round trip spin, and when anything else wants one of the two cores every hop waits for
    /// a time slice: 1000 round trips took 31.7 s while builds ran beside the tests (no timeout involved: all arrived),
    /// and 0.3 s on a quiet machine. 300 are still more than the 8-byte service's 256-message queue holds.
    /// </remarks>
    [Iceoryx2Theory]
    [InlineData(WaitMode.Spin, 1, 1, 300)] // Four spinning threads on two cores would wait for time slices, not for messages.
    [InlineData(WaitMode.Yield, 2, 2, 1_000)]
    [InlineData(WaitMode.Block, 2, 2, 1_000)]
    public void Round_trip_gets_one_echo_per_subscriber_per_message(WaitMode mode, int publishers, int subscribers, int messagesPerPublisher)
    {
        var outcome = InProcessLoop.Run(new Iceoryx2Transport(), publishers, subscribers, payloadBytes: 8, messagesPerPublisher, roundTrip: true, waitMode: mode);

        long expected = (long)messagesPerPublisher * publishers * subscribers;
        Assert.Equal(expected, outcome.Received.Received);
        Assert.Equal(0, outcome.BadEchoes);
        Assert.Equal(expected, outcome.Latency.TotalCount);
        Assert.Equal(0, outcome.Received.Lost + outcome.Received.Corrupted);
    }

    [Iceoryx2Fact]
    public void Paired_round_trip_and_header_only_large_messages_deliver()
    {
        var roundTrip = InProcessLoop.Run(new Iceoryx2Transport(), publishers: 2, subscribers: 2, payloadBytes: 100, messagesPerPublisher: 500, roundTrip: true, waitMode: WaitMode.Yield, paired: true);
        Assert.Equal(1_000, roundTrip.Latency.TotalCount);
        Assert.Equal(0, roundTrip.BadEchoes);

        var headerOnly = InProcessLoop.Run(new Iceoryx2Transport(), publishers: 1, subscribers: 2, payloadBytes: 512 * 1024, messagesPerPublisher: 300, full: false, waitMode: WaitMode.Yield);
        Assert.Equal(600, headerOnly.Received.Received);
        Assert.Equal(0, headerOnly.Received.Corrupted + headerOnly.Received.Lost);
    }

    [Iceoryx2Fact]
    public void A_payload_above_the_service_maximum_is_a_clear_error_and_the_publisher_stays_usable()
    {
        using var link = Link.Create(new Iceoryx2Transport(), maxMessageBytes: 1_000, WaitMode.Yield);

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => { link.Publisher.Loan(1_001); });
        Assert.Contains("1001-byte message does not fit", error.Message, StringComparison.Ordinal);
        Assert.Contains("1000 bytes at most", error.Message, StringComparison.Ordinal);

        // The failed loan took nothing: the publisher still sends, and the subscriber gets exactly that.
        link.Publisher.Loan(1_000).Fill(7);
        link.Publisher.Send();
        var receiver = link.Subscriber.Receivers[0];
        Assert.True(receiver.TryReceive(out var message, new CancellationTokenSource(Timeout).Token));
        Assert.Equal(1_000, message.Length);
        Assert.True(message.IndexOfAnyExcept((byte)7) < 0);
        receiver.Release();
    }

    [Iceoryx2Fact]
    public void More_publishers_or_subscribers_than_the_scenario_declared_is_a_clear_error()
    {
        var transport = new Iceoryx2Transport();
        var environment = new TransportEnvironment(Path.GetTempPath(), Environment.ProcessId);
        string key = Key();
        var declared = new PublisherOptions(environment, key, 0, ExpectedSubscribers: 1, TotalPublishers: 1, TotalSubscribers: 1, 64, WaitMode.Yield, RoundTrip: false);
        using var first = transport.CreatePublisher(declared);

        // A second publisher on a 1-publisher ALL_TO_ALL service.
        var publisherError = Assert.Throws<IOException>(() => transport.CreatePublisher(declared with { PublisherIndex = 1 }));
        Assert.Contains("maximum of 1 publisher", publisherError.Message, StringComparison.Ordinal);
        Assert.IsType<Iceoryx2Exception>(publisherError.InnerException);

        // A second subscriber on a 1-subscriber service.
        var subscriberOptions = new SubscriberOptions(environment, key, 0, [new PublisherAddress(0, first.Address)], 1, 1, 64, WaitMode.Yield, RoundTrip: false);
        using var subscriber = transport.CreateSubscriber(subscriberOptions, CancellationToken.None);
        var subscriberError = Assert.Throws<IOException>(() => transport.CreateSubscriber(subscriberOptions with { SubscriberIndex = 1 }, CancellationToken.None));
        Assert.Contains("maximum of 1 subscriber", subscriberError.Message, StringComparison.Ordinal);

        // The service itself is unharmed.
        first.WaitForSubscribers(1, Timeout, CancellationToken.None);
        first.Loan(64).Clear();
        first.Send();
    }

    [Iceoryx2Fact]
    public void A_scenario_whose_shared_memory_cannot_fit_is_refused_before_anything_is_created()
    {
        var transport = new Iceoryx2Transport();
        var environment = new TransportEnvironment(Path.GetTempPath(), Environment.ProcessId);
        var huge = new PublisherOptions(environment, Key(), 0, ExpectedSubscribers: 64, TotalPublishers: 64, TotalSubscribers: 64,
            MaxMessageBytes: 64 * 1024 * 1024 + MessageHeader.Size, WaitMode.Yield, RoundTrip: false);

        var error = Assert.Throws<IOException>(() => transport.CreatePublisher(huge));

        Assert.Contains("shared memory", error.Message, StringComparison.Ordinal);
        Assert.Contains("/dev/shm has only", error.Message, StringComparison.Ordinal);
        Assert.False(Iceoryx2Library.ServiceExists($"ipcbench/{Environment.ProcessId}/{huge.ScenarioKey}/all", Iceoryx2MessagingPattern.PublishSubscribe));
    }

    [Iceoryx2Fact]
    public void A_subscriber_that_stops_reading_fails_the_send_after_the_timeout_instead_of_hanging()
    {
        var transport = new Iceoryx2Transport(new Iceoryx2Settings { SendTimeout = TimeSpan.FromMilliseconds(300) });
        using var link = Link.Create(transport, maxMessageBytes: 1_000, WaitMode.Block);

        var clock = Stopwatch.StartNew();
        var error = Assert.Throws<IOException>(() =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                link.Publisher.Loan(1_000).Clear();
                link.Publisher.Send();
            }
        });

        Assert.Contains("took no message for 0.3 s", error.Message, StringComparison.Ordinal);
        Assert.InRange(clock.Elapsed, TimeSpan.FromMilliseconds(250), TimeSpan.FromSeconds(10));
    }

    [Iceoryx2Theory]
    [MemberData(nameof(WaitModes))]
    public void Disposing_a_subscriber_while_its_thread_waits_ends_the_wait_without_crashing(WaitMode mode)
    {
        using var link = Link.Create(new Iceoryx2Transport(), maxMessageBytes: 256, mode);
        var receiver = link.Subscriber.Receivers[0];
        bool? received = null;
        var waiting = new Thread(() => received = receiver.TryReceive(out _, CancellationToken.None));
        waiting.Start();
        Thread.Sleep(200);

        link.Subscriber.Dispose();

        Assert.True(waiting.Join(TimeSpan.FromSeconds(5)), "TryReceive did not return after the endpoint was disposed");
        Assert.False(received);
        Assert.False(receiver.TryReceive(out _, CancellationToken.None));
    }

    [Iceoryx2Fact]
    public void Disposing_a_publisher_while_its_thread_awaits_an_echo_ends_the_wait_and_frees_the_services()
    {
        using var link = Link.Create(new Iceoryx2Transport(), maxMessageBytes: 64, WaitMode.Block, roundTrip: true);
        string address = link.Publisher.Address;
        bool? echoed = null;
        var waiting = new Thread(() => echoed = link.Publisher.TryReceiveReply(out _, CancellationToken.None));
        waiting.Start();
        Thread.Sleep(200);

        link.Publisher.Dispose();

        Assert.True(waiting.Join(TimeSpan.FromSeconds(5)), "TryReceiveReply did not return after the endpoint was disposed");
        Assert.False(echoed);
        Assert.Throws<ObjectDisposedException>(() => { link.Publisher.Loan(8); });
        link.Subscriber.Dispose();
        Assert.False(Iceoryx2Library.ServiceExists(address, Iceoryx2MessagingPattern.PublishSubscribe), $"{address} still exists after every port was disposed");
    }

    [Theory]
    [InlineData(8 + MessageHeader.Size, 1, 256)] // small messages: the 256-message maximum
    [InlineData(1024 + MessageHeader.Size, 4, 256)]
    [InlineData(65536 + MessageHeader.Size, 1, 63)] // about 4 MiB per subscriber
    [InlineData(524288 + MessageHeader.Size, 1, 7)]
    [InlineData(65536 + MessageHeader.Size, 64, 14)] // 64 subscribers: shrunk to keep the publisher under 64 MiB
    [InlineData(64 * 1024 * 1024 + MessageHeader.Size, 1, 2)] // never below 2
    public void Queue_depth_follows_the_message_size_and_the_shared_memory_budget(int maxMessageBytes, int subscribers, int expected)
    {
        // bench/native computes the same (common::queue_depth), so both sides run the same service shape.
        var settings = new Iceoryx2Settings();
        Assert.Equal(expected, ServiceLayout.QueueDepth(maxMessageBytes, subscribers, settings));
        int borrowed = ServiceLayout.BorrowedSamples(maxMessageBytes, subscribers, expected, settings);
        Assert.True(ServiceLayout.SegmentBytes(maxMessageBytes, subscribers, expected, borrowed) <= 64L * 1024 * 1024 || expected == 2);
    }

    [Theory]
    [InlineData(8 + MessageHeader.Size, 1, 16)] // small messages: whole batches
    [InlineData(1024 + MessageHeader.Size, 4, 16)]
    [InlineData(65536 + MessageHeader.Size, 1, 15)] // a quarter of the 63-message queue
    [InlineData(524288 + MessageHeader.Size, 1, 1)] // a 7-message queue: one at a time
    [InlineData(65536 + MessageHeader.Size, 64, 1)] // no room left under the 64 MiB budget
    [InlineData(64 * 1024 * 1024 + MessageHeader.Size, 1, 1)]
    public void Receive_batch_is_a_quarter_of_the_queue_within_the_shared_memory_budget(int maxMessageBytes, int subscribers, int expected)
    {
        var settings = new Iceoryx2Settings();
        int depth = ServiceLayout.QueueDepth(maxMessageBytes, subscribers, settings);
        Assert.Equal(expected, ServiceLayout.BorrowedSamples(maxMessageBytes, subscribers, depth, settings));
    }

    [Iceoryx2Fact]
    public void RemoveStaleResources_runs_the_dead_node_cleanup()
    {
        var transport = new Iceoryx2Transport();

        transport.RemoveStaleResources(new TransportEnvironment(Path.GetTempPath(), Environment.ProcessId));
    }

    private static string Key() => Guid.NewGuid().ToString("N")[..10];

    /// <summary>One publisher and one subscriber, connected, not driven.</summary>
    private sealed class Link : IDisposable
    {
        private Link(IPublisherEndpoint publisher, ISubscriberEndpoint subscriber)
        {
            Publisher = publisher;
            Subscriber = subscriber;
        }

        public IPublisherEndpoint Publisher { get; }

        public ISubscriberEndpoint Subscriber { get; }

        public static Link Create(ITransport transport, int maxMessageBytes, WaitMode mode, bool roundTrip = false)
        {
            var environment = new TransportEnvironment(Path.GetTempPath(), Environment.ProcessId);
            string key = Key();
            var publisher = transport.CreatePublisher(new PublisherOptions(environment, key, 0, 1, 1, 1, maxMessageBytes, mode, roundTrip));
            try
            {
                var subscriber = transport.CreateSubscriber(
                    new SubscriberOptions(environment, key, 0, [new PublisherAddress(0, publisher.Address)], 1, 1, maxMessageBytes, mode, roundTrip),
                    CancellationToken.None);
                publisher.WaitForSubscribers(1, Timeout, CancellationToken.None);
                return new Link(publisher, subscriber);
            }
            catch
            {
                publisher.Dispose();
                throw;
            }
        }

        public void Dispose()
        {
            Subscriber.Dispose();
            Publisher.Dispose();
        }
    }
}

/// <summary>Skipped (with the reason) when libipcbench_iox2.so is unavailable, unless IPCBENCH_REQUIRE_ICEORYX2=1.</summary>
public sealed class Iceoryx2FactAttribute : FactAttribute
{
    public Iceoryx2FactAttribute()
    {
        Skip = Iceoryx2Availability.SkipReason;
    }
}

/// <inheritdoc cref="Iceoryx2FactAttribute"/>
public sealed class Iceoryx2TheoryAttribute : TheoryAttribute
{
    public Iceoryx2TheoryAttribute()
    {
        Skip = Iceoryx2Availability.SkipReason;
    }
}

internal static class Iceoryx2Availability
{
    public static string? SkipReason =>
        !Iceoryx2Library.IsAvailable && Environment.GetEnvironmentVariable("IPCBENCH_REQUIRE_ICEORYX2") != "1"
            ? $"iceoryx2 unavailable: {Iceoryx2Library.UnavailableReason}"
            : null;
}
