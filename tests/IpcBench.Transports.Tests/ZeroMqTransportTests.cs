using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.NetworkInformation;
using IpcBench.Transports.ZeroMq;
using NetMQ;
using NetMQ.Sockets;
using Xunit.Abstractions;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The zeromq transport's own claims, below the engine: what NetMQ's ipc:// really is (why the transport binds TCP
/// explicitly), that the ROUTER_MANDATORY pattern waits at the high-water mark instead of dropping, that a publisher
/// blocked on a stalled subscriber is released by Dispose from another thread, round trips, and that nothing stays open.
/// The registry-driven TransportDeliveryTests cover every topology and wait mode on top.
/// </summary>
[Collection(nameof(SerialMeasurements))]
public class ZeroMqTransportTests(ITestOutputHelper output)
{
    private const int MessageBytes = ZeroMqHarness.MessageBytes;
    private static readonly TimeSpan Timeout = ZeroMqHarness.WaitLimit;

    public static TheoryData<WaitMode> WaitModes => [WaitMode.Spin, WaitMode.Yield, WaitMode.Block];

    [Fact]
    public void Is_registered_as_a_cross_process_transport_with_round_trips_and_every_wait_mode()
    {
        var transport = TransportRegistry.CreateDefault().Find("zeromq");

        Assert.IsType<ZeroMqTransport>(transport);
        Assert.IsType<ZeroMqTransport>(TransportRegistry.CreateDefault().All[^1]);
        Assert.Null(transport.UnavailableReason);
        Assert.Equal(
            new TransportCapabilities(true, false, true, transport.Capabilities.WaitModes, WaitMode.Block, 64 * 1024 * 1024, transport.Capabilities.HotLoopAllocations),
            transport.Capabilities);
        Assert.StartsWith("NetMQ:", transport.Capabilities.HotLoopAllocations, StringComparison.Ordinal);
        Assert.Equal([WaitMode.Spin, WaitMode.Yield, WaitMode.Block], transport.Capabilities.WaitModes);
        Assert.Contains("ipc:// is TCP loopback", transport.Description, StringComparison.Ordinal);
    }

    /// <summary>
    /// NetMQ 4.0.4.5's IpcAddress.Resolve binds TCP on 127.0.0.1 at 10000 + |hash(name)| % 55536, where the hash is its
    /// own GetStableHashCode (the 32-bit .NET Framework string hash, read from its IL), not the per-process randomised
    /// string.GetHashCode: two processes agree on the port, but it is an ordinary loopback TCP port that anything local
    /// can connect to and that can collide with a port in use. No Unix socket and no file is involved.
    /// </summary>
    [Fact]
    public void Ipc_endpoints_are_tcp_loopback_ports_hashed_from_the_name_and_not_unix_sockets()
    {
        string name = FreeIpcName();
        int port = IpcPort(name);
        string cwdFile = Path.Combine(Environment.CurrentDirectory, name);

        using (var router = new RouterSocket())
        {
            router.Options.Linger = TimeSpan.Zero;
            router.Bind($"ipc://{name}");

            Assert.Contains(new IPEndPoint(IPAddress.Loopback, port), TcpListeners());
            Assert.DoesNotContain(name, File.ReadAllText("/proc/net/unix"), StringComparison.Ordinal);
            Assert.False(File.Exists(cwdFile) || File.Exists(Path.Combine("/tmp", name)), "ipc:// created a file");

            // A plain TCP client reaches it: it is nothing but a loopback port.
            using var client = new System.Net.Sockets.TcpClient();
            client.Connect(IPAddress.Loopback, port);
        }

        Assert.True(Poll(() => !TcpListeners().Contains(new IPEndPoint(IPAddress.Loopback, port)), TimeSpan.FromSeconds(5)), "the ipc:// listener stayed open");
    }

    [Fact]
    public void Publishers_bind_tcp_loopback_on_an_ephemeral_port_and_release_it_on_dispose()
    {
        using var pair = ZeroMqPair.Open(subscribers: 1, WaitMode.Block);
        var uri = new Uri(pair.Publisher.Address);

        Assert.Equal("tcp", uri.Scheme);
        Assert.Equal("127.0.0.1", uri.Host);
        Assert.Contains(new IPEndPoint(IPAddress.Loopback, uri.Port), TcpListeners());

        pair.Dispose();
        Assert.True(Poll(() => !TcpListeners().Contains(new IPEndPoint(IPAddress.Loopback, uri.Port)), TimeSpan.FromSeconds(5)), "the publisher's port stayed open");
    }

    [Fact]
    public void High_water_mark_bounds_the_queue_sizes_and_is_never_zero_which_would_mean_unbounded()
    {
        Assert.Equal(1000, ZeroMqSockets.HighWatermark(MessageBytes));
        Assert.Equal(255, ZeroMqSockets.HighWatermark(MessageHeader.Size + 64 * 1024));
        Assert.Equal(2, ZeroMqSockets.HighWatermark(MessageHeader.Size + 64 * 1024 * 1024));
    }

    /// <summary>
    /// A subscriber that does not read: the publisher's sends stop at roughly the two queues' high-water marks plus the
    /// kernel's socket buffers (not a single message is dropped to make room), and once it reads, every message arrives
    /// in order.
    /// </summary>
    [Fact]
    public void A_subscriber_that_stops_reading_makes_the_publisher_wait_at_the_high_water_mark_and_loses_nothing()
    {
        const int total = 100_000;
        using var pair = ZeroMqPair.Open(subscribers: 1, WaitMode.Block);
        using var publishing = new PublishingThread(pair.Publisher, total);

        long plateau = publishing.WaitUntilBlocked();
        int hwm = ZeroMqSockets.HighWatermark(MessageBytes);
        long kernelBufferBytes = MaxSocketBuffer("tcp_wmem") + MaxSocketBuffer("tcp_rmem");
        long bound = (2 * hwm) + (kernelBufferBytes / MessageBytes) + 100;
        output.WriteLine($"blocked after {plateau} messages of {MessageBytes} bytes (HWM {hwm} per queue, kernel buffers up to {kernelBufferBytes} bytes, bound {bound})");
        Assert.InRange(plateau, hwm, bound);
        Assert.True(plateau < total, "the publisher never blocked");

        var receiver = pair.Subscribers[0].Receivers[0];
        using var cancel = new CancellationTokenSource(Timeout);
        for (long expected = 0; expected < total; expected++)
        {
            Assert.True(receiver.TryReceive(out var message, cancel.Token), $"message {expected} never arrived");
            var header = MessageHeader.Read(message);
            Assert.Equal(expected, header.Sequence);
            Assert.Equal(MessageBytes, message.Length);
            receiver.Release();
        }

        publishing.Join();
        Assert.Null(publishing.Failure);
        Assert.Equal(total, publishing.Sent);
    }

    /// <summary>
    /// A subscriber stopped (as by SIGSTOP) leaves its publisher blocked in Send; the daemon then disposes the endpoint
    /// from another thread and needs the send to end with an error, not hang (ScenarioRun.StopPublishers).
    /// </summary>
    [Theory]
    [MemberData(nameof(WaitModes))]
    public void Dispose_from_another_thread_frees_a_publisher_blocked_in_send_within_a_second(WaitMode mode)
    {
        using var pair = ZeroMqPair.Open(subscribers: 1, mode);
        using var publishing = new PublishingThread(pair.Publisher, long.MaxValue);
        publishing.WaitUntilBlocked();

        var clock = Stopwatch.StartNew();
        pair.Publisher.Dispose();
        var disposed = clock.Elapsed;

        Assert.True(publishing.Join(TimeSpan.FromSeconds(1)), "the blocked publisher did not return within 1 s of Dispose");
        output.WriteLine($"{mode}: Dispose returned after {disposed.TotalMilliseconds:0} ms, the publisher after {clock.ElapsedMilliseconds} ms: {publishing.Failure?.Message}");
        Assert.IsType<IOException>(publishing.Failure);
        Assert.True(disposed < TimeSpan.FromSeconds(1), $"Dispose took {disposed.TotalMilliseconds:0} ms");
    }

    /// <summary>A subscriber that goes away closes its connection: the publisher's send fails instead of waiting for it.</summary>
    [Fact]
    public void A_subscriber_that_goes_away_fails_the_blocked_publisher_instead_of_hanging_it()
    {
        using var pair = ZeroMqPair.Open(subscribers: 1, WaitMode.Block);
        using var publishing = new PublishingThread(pair.Publisher, long.MaxValue);
        publishing.WaitUntilBlocked();

        pair.Subscribers[0].Dispose();

        Assert.True(publishing.Join(TimeSpan.FromSeconds(5)), "the publisher still waits for a subscriber that is gone");
        Assert.IsType<IOException>(publishing.Failure);
    }

    [Theory]
    [MemberData(nameof(WaitModes))]
    public void Dispose_from_another_thread_ends_a_receiver_waiting_for_a_message(WaitMode mode)
    {
        using var pair = ZeroMqPair.Open(subscribers: 1, mode);
        var receiver = pair.Subscribers[0].Receivers[0];
        bool? received = null;
        var waiting = new Thread(() => received = receiver.TryReceive(out _, CancellationToken.None));
        waiting.Start();
        Thread.Sleep(200);

        pair.Subscribers[0].Dispose();

        Assert.True(waiting.Join(TimeSpan.FromSeconds(1)), "the receiver kept waiting after Dispose");
        Assert.False(received);
    }

    [Theory]
    [MemberData(nameof(WaitModes))]
    public void Round_trip_echoes_come_back_from_every_subscriber(WaitMode mode)
    {
        using var pair = ZeroMqPair.Open(subscribers: 2, mode, roundTrip: true);
        using var cancel = new CancellationTokenSource(Timeout);
        Span<byte> bytes = stackalloc byte[MessageHeader.Size];
        for (long sequence = 0; sequence < 200; sequence++)
        {
            ZeroMqHarness.WriteMessage(pair.Publisher, sequence);
            pair.Publisher.Send();
            foreach (var subscriber in pair.Subscribers)
            {
                var receiver = subscriber.Receivers[0];
                Assert.True(receiver.TryReceive(out var message, cancel.Token));
                var echo = MessageHeader.Read(message);
                echo.PayloadLength = 0;
                echo.Write(bytes);
                receiver.Reply(bytes);
                receiver.Release();
            }

            for (int i = 0; i < pair.Subscribers.Count; i++)
            {
                Assert.True(pair.Publisher.TryReceiveReply(out var reply, cancel.Token));
                Assert.Equal(MessageHeader.Size, reply.Length);
                Assert.Equal(sequence, MessageHeader.Read(reply).Sequence);
                pair.Publisher.ReleaseReply();
            }
        }
    }

    [Fact]
    public void Waiting_for_subscribers_that_never_come_times_out_naming_the_address()
    {
        var transport = new ZeroMqTransport();
        using var publisher = transport.CreatePublisher(ZeroMqHarness.PublisherOptionsFor(ZeroMqHarness.Key(), 1, WaitMode.Block, roundTrip: false));

        var clock = Stopwatch.StartNew();
        var error = Assert.Throws<TimeoutException>(() => publisher.WaitForSubscribers(1, TimeSpan.FromMilliseconds(300), CancellationToken.None));

        Assert.Contains(publisher.Address, error.Message, StringComparison.Ordinal);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(2), $"the timeout took {clock.Elapsed.TotalMilliseconds:0} ms");
    }

    private static IPEndPoint[] TcpListeners() => IPGlobalProperties.GetIPGlobalProperties().GetActiveTcpListeners();

    /// <summary>The largest buffer the kernel may give a TCP socket (the third field of net.ipv4.tcp_wmem / tcp_rmem).</summary>
    private static long MaxSocketBuffer(string sysctl) =>
        long.Parse(File.ReadAllText($"/proc/sys/net/ipv4/{sysctl}").Split('\t', ' ')[^1].Trim(), CultureInfo.InvariantCulture);

    /// <summary>NetMQ 4.0.4.5's port for ipc://name, as its IpcAddress.Resolve computes it.</summary>
    private static int IpcPort(string name)
    {
        int hash = StableHash(name);
        if (hash < 0)
        {
            hash = -hash;
        }

        return 10000 + (hash % 55536);
    }

    /// <summary>NetMQ's GetStableHashCode: the .NET Framework 32-bit string hash, the same in every process.</summary>
    private static int StableHash(string text)
    {
        int hash1 = 5381;
        int hash2 = hash1;
        for (int i = 0; i < text.Length; i += 2)
        {
            hash1 = unchecked(((hash1 << 5) + hash1) ^ text[i]);
            if (i == text.Length - 1)
            {
                break;
            }

            hash2 = unchecked(((hash2 << 5) + hash2) ^ text[i + 1]);
        }

        return unchecked(hash1 + (hash2 * 1566083941));
    }

    /// <summary>A unique name whose hashed port nothing listens on yet (else the bind would fail, which is the point).</summary>
    private static string FreeIpcName()
    {
        var listening = TcpListeners();
        while (true)
        {
            string name = $"ipcbench-zeromq-{ZeroMqHarness.Key()}";
            if (!listening.Any(l => l.Port == IpcPort(name)))
            {
                return name;
            }
        }
    }

    private static bool Poll(Func<bool> condition, TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > timeout)
            {
                return false;
            }

            Thread.Sleep(20);
        }

        return true;
    }
}
