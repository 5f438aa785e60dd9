using IpcBench.Transports;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

[Collection(nameof(SerialMeasurements))]
public class TransportDeliveryTests
{
    // Transports that cannot run here (e.g. iceoryx2 built without its native library) are left out; their own tests say why.
    public static TheoryData<string> TransportIds() => new(TransportRegistry.CreateDefault().All.Where(t => t.UnavailableReason is null).Select(t => t.Id));

    public static TheoryData<string, WaitMode> TransportWaitModes()
    {
        var data = new TheoryData<string, WaitMode>();
        foreach (var transport in TransportRegistry.CreateDefault().All.Where(t => t.UnavailableReason is null))
        {
            foreach (var mode in transport.Capabilities.WaitModes)
            {
                data.Add(transport.Id, mode);
            }
        }

        return data;
    }

    private static ITransport Transport(string id) => TransportRegistry.CreateDefault().Find(id)!;

    [Theory]
    [MemberData(nameof(TransportIds))]
    public void All_to_all_delivers_every_message_to_every_subscriber_intact(string id)
    {
        var outcome = InProcessLoop.Run(Transport(id), publishers: 2, subscribers: 3, payloadBytes: 1000, messagesPerPublisher: 20_000);

        Assert.Equal(40_000, outcome.Sent);
        Assert.Equal(outcome.Sent * 3, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Lost);
        Assert.Equal(0, outcome.Received.Corrupted);
        Assert.Equal(0, outcome.Received.Duplicated);
        Assert.Equal(outcome.Sent * 3, outcome.Latency.TotalCount);
    }

    [Theory]
    [MemberData(nameof(TransportIds))]
    public void Paired_topology_delivers_each_publisher_to_its_own_subscriber(string id)
    {
        var outcome = InProcessLoop.Run(Transport(id), publishers: 3, subscribers: 3, payloadBytes: 64, messagesPerPublisher: 10_000, paired: true);

        Assert.Equal(30_000, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Lost + outcome.Received.Corrupted + outcome.Received.Duplicated);
    }

    [Theory]
    [MemberData(nameof(TransportIds))]
    public void Round_trip_measures_one_echo_per_subscriber_per_message(string id)
    {
        var outcome = InProcessLoop.Run(Transport(id), publishers: 1, subscribers: 2, payloadBytes: 8, messagesPerPublisher: 2_000, roundTrip: true);

        Assert.Equal(4_000, outcome.Received.Received);
        Assert.Equal(0, outcome.BadEchoes);
        Assert.Equal(4_000, outcome.Latency.TotalCount);
        Assert.True(LatencyHistograms.Percentile(outcome.Latency, 50) > 0);
    }

    [Theory]
    [InlineData("uds", WaitMode.Spin)]
    [InlineData("tcp", WaitMode.Yield)]
    [InlineData("channels", WaitMode.Block)]
    [InlineData("channels", WaitMode.Spin)]
    public void Polling_and_blocking_wait_modes_deliver_everything(string id, WaitMode mode)
    {
        var outcome = InProcessLoop.Run(Transport(id), publishers: 1, subscribers: 1, payloadBytes: 100_000, messagesPerPublisher: 500, waitMode: mode);

        // 100 kB messages take several reads each; 500 of them (50 MB) still fill and drain the socket buffers hundreds of times.
        Assert.Equal(500, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Corrupted + outcome.Received.Lost);
    }

    [Theory]
    [InlineData("uds")]
    [InlineData("named-pipes")]
    public void Large_messages_are_reassembled_across_many_reads(string id)
    {
        var outcome = InProcessLoop.Run(Transport(id), publishers: 1, subscribers: 2, payloadBytes: 4 * 1024 * 1024, messagesPerPublisher: 40);

        Assert.Equal(80, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Corrupted);
    }

    /// <summary>
    /// Round trips under SPIN. One message is in flight at a time, so after a few laps of the smallest reply queue
    /// (shm-ring's 16 slots) further echoes repeat the same path; the other wait modes' 500 still wrap every queue. Each
    /// hop of a spinning round trip can cost a scheduler slice on 2 cores: zeromq's I/O thread has to preempt two
    /// spinning threads to move every message, which made 500 round trips take 26 s on a busy machine (36-100 ms each).
    /// </summary>
    private const long SpinningRoundTrips = 64;

    [Theory]
    [MemberData(nameof(TransportWaitModes))]
    public void Every_declared_wait_mode_delivers_everything_in_both_directions(string id, WaitMode mode)
    {
        var stream = InProcessLoop.Run(Transport(id), publishers: 1, subscribers: 2, payloadBytes: 4000, messagesPerPublisher: 3_000, waitMode: mode);
        Assert.Equal(6_000, stream.Received.Received);
        Assert.Equal(0, stream.Received.Corrupted + stream.Received.Lost + stream.Received.Duplicated);
        if (!Transport(id).Capabilities.SupportsRoundTrip)
        {
            return;
        }

        long roundTrips = mode == WaitMode.Spin ? SpinningRoundTrips : 500;
        var roundTrip = InProcessLoop.Run(Transport(id), publishers: 1, subscribers: 1, payloadBytes: 8, messagesPerPublisher: roundTrips, roundTrip: true, waitMode: mode);
        Assert.Equal(roundTrips, roundTrip.Received.Received);
        Assert.Equal(roundTrips, roundTrip.Latency.TotalCount);
        Assert.Equal(0, roundTrip.BadEchoes);
    }

    [Theory]
    [MemberData(nameof(TransportIds))]
    public void Header_only_runs_do_not_fail_verification(string id)
    {
        var outcome = InProcessLoop.Run(Transport(id), publishers: 1, subscribers: 1, payloadBytes: 512, messagesPerPublisher: 5_000, full: false);

        Assert.Equal(5_000, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Corrupted);
    }
}
