using System.Buffers.Binary;
using System.Diagnostics;
using System.Runtime.Versioning;
using IpcBench.Transports.SharedMemory;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The shm-ring transport below the engine: chunking and wrap-around edges, gating by the slowest cursor, liveness
/// (a really killed process), header validation, file life cycle, wake-ups on close and the allocation-free hot path.
/// </summary>
[Collection(nameof(SerialMeasurements))]
[SupportedOSPlatform("linux")]
public class ShmRingTests
{
    /// <summary>1024 data bytes per slot (1088-byte slots), 8 slots: small enough to wrap and fill in a few messages.</summary>
    private const int SlotData = 1024;

    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    private static ShmRingTransport SmallRing(TimeSpan? stallTimeout = null, string? directory = null) => new(new ShmRingSettings
    {
        SlotDataBytes = SlotData,
        RingBytes = 8 * 1088,
        StallTimeout = stallTimeout ?? TimeSpan.FromSeconds(10),
        Directory = directory ?? "/dev/shm",
    });

    [Theory]
    [InlineData(WaitMode.Spin)]
    [InlineData(WaitMode.Yield)]
    [InlineData(WaitMode.Block)]
    public void Chunking_edges_arrive_intact_across_wrap_around(WaitMode mode)
    {
        // Exactly one slot, one byte more, two exact slots, a message the size of the whole ring and one 2.5 times as big.
        int[] lengths = [8, SlotData - 1, SlotData, SlotData + 1, 2 * SlotData, 2 * SlotData + 1, 8 * SlotData, 20 * SlotData + 7, 100];
        using var ring = Ring.Create(SmallRing(), 20 * SlotData + 7, subscribers: 1, mode);
        Assert.Equal(8, ring.Publisher.Geometry.SlotCount);
        Assert.Equal(SlotData, ring.Publisher.Geometry.SlotDataBytes);
        const int Messages = 450;
        var receiver = ring.Receiver(0);

        var consumer = Worker.Start(() =>
        {
            for (long seq = 0; seq < Messages; seq++)
            {
                Assert.True(receiver.TryReceive(out var message, CancellationToken.None));
                int expected = lengths[seq % lengths.Length];
                Verify(message, seq, expected);
                Assert.Equal(expected <= SlotData, receiver.IsInSharedMemory(message));
                receiver.Release();
            }
        });

        long slots = 0;
        for (long seq = 0; seq < Messages; seq++)
        {
            int length = lengths[seq % lengths.Length];
            Fill(ring.Publisher.Loan(length), seq);
            ring.Publisher.Send();
            slots += (length + SlotData - 1) / SlotData;
        }

        consumer.Complete(Timeout);
        Assert.Equal(slots, ring.Publisher.Published);
        Assert.True(slots > 100 * 8, "the ring wrapped around many times");
    }

    [Theory]
    [InlineData(WaitMode.Spin)]
    [InlineData(WaitMode.Yield)]
    [InlineData(WaitMode.Block)]
    public void Segmented_loans_and_receives_stay_in_the_slots_across_wrap_around(WaitMode mode)
    {
        // Up to 8 chunks a message fits the ring and is published whole by Send; beyond, chunk by chunk.
        int[] lengths = [8, SlotData, SlotData + 1, 3 * SlotData - 5, 8 * SlotData, 8 * SlotData + 1, 20 * SlotData + 7, 100];
        using var ring = Ring.Create(SmallRing(), 20 * SlotData + 7, subscribers: 2, mode);
        // The lengths take 46 slots a lap, so every 4 laps each length has started at each offset it can in the 8-slot
        // ring. SPIN runs 12 laps (three spinning threads on 2 cores wait for time slices at every wrap, 8.5 s for 300
        // messages on a busy machine), the other modes 300 messages for more interleavings.
        int messages = mode == WaitMode.Spin ? 12 * lengths.Length : 300;
        var consumers = Enumerable.Range(0, 2).Select(s => Worker.Start(() =>
        {
            var receiver = ring.Receiver(s);
            var copy = new byte[20 * SlotData + 7];
            for (long seq = 0; seq < messages; seq++)
            {
                Assert.True(receiver.TryReceiveFirstSegment(out var segment, out int length, CancellationToken.None));
                Assert.Equal(lengths[seq % lengths.Length], length);
                int offset = 0;
                do
                {
                    Assert.True(receiver.IsInSharedMemory(segment), "every segment is read in place");
                    segment.CopyTo(copy.AsSpan(offset));
                    offset += segment.Length;
                }
                while (receiver.TryReceiveNextSegment(out segment, CancellationToken.None));

                Assert.Equal(length, offset);
                Verify(copy.AsSpan(0, length), seq, length);
                receiver.Release();
            }
        })).ToList();

        long slots = 0;
        var message = new byte[20 * SlotData + 7];
        for (long seq = 0; seq < messages; seq++)
        {
            int length = lengths[seq % lengths.Length];
            Fill(message.AsSpan(0, length), seq);
            var segment = ring.Publisher.LoanFirstSegment(length);
            Assert.Equal(length <= 8 * SlotData, ring.Publisher.FirstSegmentWritableUntilSend);
            int offset = 0;
            do
            {
                message.AsSpan(offset, segment.Length).CopyTo(segment);
                offset += segment.Length;
            }
            while (!(segment = ring.Publisher.LoanNextSegment()).IsEmpty);

            Assert.Equal(length, offset);
            ring.Publisher.Send();
            slots += (length + SlotData - 1) / SlotData;
        }

        consumers.ForEach(c => c.Complete(Timeout));
        Assert.Equal(slots, ring.Publisher.Published);
    }

    [Theory]
    [InlineData(WaitMode.Spin)]
    [InlineData(WaitMode.Yield)]
    [InlineData(WaitMode.Block)]
    public void A_full_ring_holds_the_publisher_until_the_slow_subscriber_drains_it(WaitMode mode)
    {
        using var ring = Ring.Create(SmallRing(), SlotData, subscribers: 1, mode);
        const int Messages = 100;
        var producer = Worker.Start(() => SendSequence(ring.Publisher, Messages, SlotData));

        Thread.Sleep(300);
        Assert.False(producer.IsCompleted);
        Assert.Equal(8, ring.Publisher.Published);

        var receiver = ring.Receiver(0);
        for (long seq = 0; seq < Messages; seq++)
        {
            Assert.True(receiver.TryReceive(out var message, CancellationToken.None));
            Verify(message, seq, SlotData);
            receiver.Release();
        }

        producer.Complete(Timeout);
        Assert.Equal(Messages, ring.Publisher.Published);
    }

    /// <summary>
    /// BLOCK's wake-up protocol, a million times: the publisher writes each message only once the receiver has taken
    /// the last one and announced that it sleeps, at varying delays, so each publish lands either between the
    /// announcement and FUTEX_WAIT or inside it. A lost wake-up would end a sleep by its 100 ms timeout with the data
    /// already there.
    /// </summary>
    [Fact]
    public void Block_loses_no_wake_up_over_a_million_sleeps()
    {
        const int Messages = 1_000_000;
        using var ring = Ring.Create(SmallRing(), SlotData, subscribers: 1, WaitMode.Block);
        var receiver = ring.Receiver(0);
        long consumed = 0;
        var consumer = Worker.Start(() =>
        {
            for (long seq = 0; seq < Messages; seq++)
            {
                Assert.True(receiver.TryReceive(out var message, CancellationToken.None));
                Assert.Equal(seq, BinaryPrimitives.ReadInt64LittleEndian(message));
                receiver.Release();
                Assert.True(receiver.MissedWakeups == 0, $"message {seq}: a sleep timed out with its data already published");
                Volatile.Write(ref consumed, seq + 1);
            }
        });
        var stopwatch = Stopwatch.StartNew();
        var producer = Worker.Start(() =>
        {
            var random = new Random(33);
            for (long seq = 0; seq < Messages; seq++)
            {
                // The receiver has taken seq - 1 (so it has left its last sleep) and announced the next one.
                while (Volatile.Read(ref consumed) != seq || ring.Publisher.DataWaiters == 0)
                {
                    Thread.SpinWait(4);
                }

                Thread.SpinWait(random.Next(0, 3) switch { 0 => 0, 1 => random.Next(1, 20), _ => random.Next(20, 400) });
                BinaryPrimitives.WriteInt64LittleEndian(ring.Publisher.Loan(16), seq);
                ring.Publisher.Send();
            }
        });

        consumer.Complete(TimeSpan.FromMinutes(3));
        producer.Complete(TimeSpan.FromMinutes(1));
        Assert.Equal(0, receiver.MissedWakeups);
        Assert.True(receiver.Sleeps >= Messages, $"{receiver.Sleeps} sleeps announced for {Messages} messages");
        Console.WriteLine($"{Messages} BLOCK wake-ups in {stopwatch.Elapsed.TotalSeconds:0.0} s, {receiver.Sleeps} sleeps, 0 missed");
    }

    [Fact]
    public void Each_subscriber_has_its_own_cursor_and_the_slowest_gates_the_publisher()
    {
        using var ring = Ring.Create(SmallRing(), SlotData, subscribers: 3, WaitMode.Yield);
        const int Messages = 200;
        var received = new int[3];
        var slowMayRead = new ManualResetEventSlim();
        var consumers = Enumerable.Range(0, 3).Select(s => Worker.Start(() =>
        {
            if (s == 2)
            {
                slowMayRead.Wait();
            }

            var receiver = ring.Receiver(s);
            for (long seq = 0; seq < Messages; seq++)
            {
                Assert.True(receiver.TryReceive(out var message, CancellationToken.None));
                Verify(message, seq, 512);
                receiver.Release();
                Interlocked.Increment(ref received[s]);
            }
        })).ToList();
        var producer = Worker.Start(() => SendSequence(ring.Publisher, Messages, 512));

        Thread.Sleep(300);
        Assert.Equal(8, ring.Publisher.Published);
        Assert.Equal(8, Volatile.Read(ref received[0]));
        Assert.Equal(8, Volatile.Read(ref received[1]));
        Assert.Equal(0, Volatile.Read(ref received[2]));

        slowMayRead.Set();
        consumers.Append(producer).ToList().ForEach(w => w.Complete(Timeout));
        Assert.All(received, count => Assert.Equal(Messages, count));
    }

    [Fact]
    public void A_subscriber_admitted_mid_stream_starts_at_a_message_boundary()
    {
        var transport = SmallRing();
        using var ring = Ring.Create(transport, 3 * SlotData, subscribers: 0, WaitMode.Yield);
        var enough = new ManualResetEventSlim();
        var producer = Worker.Start(() =>
        {
            long seq = 0;
            while (!enough.IsSet)
            {
                // Three chunks each: the subscriber is admitted at whatever chunk the publisher is about to write.
                Fill(ring.Publisher.Loan(2 * SlotData + 500), seq++);
                ring.Publisher.Send();
            }

            Fill(ring.Publisher.Loan(8), -1);
            ring.Publisher.Send();
        });

        Thread.Sleep(50);
        var subscriber = ring.AddSubscriber(transport, 0);
        var receiver = subscriber.RingReceivers[0];
        long previous = -1;
        int count = 0;
        while (true)
        {
            Assert.True(receiver.TryReceive(out var message, CancellationToken.None));
            long seq = BinaryPrimitives.ReadInt64LittleEndian(message);
            if (seq == -1)
            {
                break;
            }

            Verify(message, seq, 2 * SlotData + 500);
            Assert.True(previous == -1 || seq == previous + 1, $"message {seq} after {previous}");
            previous = seq;
            receiver.Release();
            if (++count == 100)
            {
                enough.Set();
            }
        }

        producer.Complete(Timeout);
        Assert.True(count >= 100);
    }

    [Theory]
    [InlineData(WaitMode.Yield)]
    [InlineData(WaitMode.Block)]
    public void A_killed_subscriber_process_makes_Send_throw_instead_of_hanging(WaitMode mode)
    {
        using var ring = Ring.Create(SmallRing(), SlotData, subscribers: 0, mode);
        using var victim = Process.Start(new ProcessStartInfo("sleep", "30") { UseShellExecute = false })!;
        ring.Publisher.AddSubscriberForTest(victim.Id, subscriberIndex: 7);

        // It never reads: 8 messages fill the ring, the 9th waits for it.
        SendSequence(ring.Publisher, 8, 64);
        var blocked = Worker.Start(() => SendSequence(ring.Publisher, 1, 64));
        Thread.Sleep(300);
        Assert.False(blocked.IsCompleted);

        var stopwatch = Stopwatch.StartNew();
        victim.Kill();
        victim.WaitForExit();
        Assert.True(blocked.Join(TimeSpan.FromSeconds(5)), "Send still hangs 5 s after the subscriber was killed");
        var error = Assert.IsType<IOException>(blocked.Error);
        Assert.True(stopwatch.Elapsed < TimeSpan.FromSeconds(3), $"took {stopwatch.Elapsed}");
        Assert.Contains($"subscriber 7 (pid {victim.Id}) died", error.Message);
        Assert.Contains("evicted", error.Message);

        // Evicted: the publisher goes on without it.
        SendSequence(ring.Publisher, 20, 64);
    }

    [Fact]
    public void A_chunked_message_abandoned_by_a_failed_Send_is_dropped_by_the_other_subscribers()
    {
        using var ring = Ring.Create(SmallRing(), 20 * SlotData, subscribers: 1, WaitMode.Yield);
        using var victim = Process.Start(new ProcessStartInfo("sleep", "30") { UseShellExecute = false })!;
        ring.Publisher.AddSubscriberForTest(victim.Id, subscriberIndex: 5);
        var receiver = ring.Receiver(0);
        var received = new List<long>();
        var consumer = Worker.Start(() =>
        {
            while (receiver.TryReceive(out var message, CancellationToken.None))
            {
                long seq = BinaryPrimitives.ReadInt64LittleEndian(message);
                Verify(message, seq, seq % 2 == 0 ? 3 * SlotData : 100);
                received.Add(seq);
                receiver.Release();
            }
        });

        // Message 0 has 20 chunks; the victim never reads, so Send stalls after 8 of them until the victim dies.
        var sending = Worker.Start(() => SendSequence(ring.Publisher, 1, 20 * SlotData));
        Thread.Sleep(200);
        victim.Kill();
        victim.WaitForExit();
        Assert.True(sending.Join(TimeSpan.FromSeconds(5)));
        Assert.IsType<IOException>(sending.Error);

        for (long seq = 1; seq <= 6; seq++)
        {
            Fill(ring.Publisher.Loan(seq % 2 == 0 ? 3 * SlotData : 100), seq);
            ring.Publisher.Send();
        }

        ring.Publisher.Dispose();
        consumer.Complete(Timeout);
        Assert.Equal([1, 2, 3, 4, 5, 6], received);
    }

    [Fact]
    public void A_stalled_subscriber_is_evicted_after_the_stall_timeout()
    {
        using var ring = Ring.Create(SmallRing(stallTimeout: TimeSpan.FromMilliseconds(400)), SlotData, subscribers: 0, WaitMode.Block);

        // Our own pid: alive, so only the stale heartbeat and the motionless cursor can give it away.
        ring.Publisher.AddSubscriberForTest(Environment.ProcessId, subscriberIndex: 3);
        SendSequence(ring.Publisher, 8, 64);
        var stopwatch = Stopwatch.StartNew();
        var error = Assert.Throws<IOException>(() => SendSequence(ring.Publisher, 1, 64));
        Assert.InRange(stopwatch.Elapsed, TimeSpan.FromMilliseconds(300), TimeSpan.FromSeconds(3));
        Assert.Contains("subscriber 3", error.Message);
        Assert.Contains("stalled", error.Message);
    }

    [Fact]
    public void Truncated_garbage_and_foreign_files_are_refused_with_a_clear_error()
    {
        var transport = SmallRing();
        using var ring = Ring.Create(transport, SlotData, subscribers: 0, WaitMode.Yield);
        byte[] valid = File.ReadAllBytes(ring.Publisher.Address);
        Assert.Equal(ring.Publisher.Geometry.FileBytes, valid.Length);

        string Refusal(byte[] content)
        {
            var path = Path.Combine("/dev/shm", $"ipcbench-test-{Guid.NewGuid():N}");
            File.WriteAllBytes(path, content);
            try
            {
                var options = new SubscriberOptions(ring.Environment, ring.Key, 0, [new PublisherAddress(0, path)], 1, 1, SlotData, WaitMode.Yield, false);
                return Assert.Throws<InvalidDataException>(() => transport.CreateSubscriber(options, CancellationToken.None)).Message;
            }
            finally
            {
                File.Delete(path);
            }
        }

        Assert.Contains("truncated: the file is 4160 bytes, its header declares", Refusal(valid[..4160]));
        Assert.Contains("shorter than the 4096-byte control block", Refusal(valid[..100]));
        Assert.Contains("shorter than the 4096-byte control block", Refusal([]));

        var garbage = new byte[64 * 1024];
        new Random(7).NextBytes(garbage);
        Assert.Contains("bad magic", Refusal(garbage));
        Assert.Contains("not an ipcbench shm-ring file", Refusal(new byte[valid.Length]));

        var foreign = (byte[])valid.Clone();
        BinaryPrimitives.WriteInt32LittleEndian(foreign.AsSpan(8), 99);
        Assert.Contains("layout version 99; this build reads version 3", Refusal(foreign));

        // Files of the versions before (1: a shared published counter, no slot sequences; 2: every slot's data 24 bytes
        // in) from older publishers.
        foreach (int version in new[] { 1, 2 })
        {
            var older = (byte[])valid.Clone();
            BinaryPrimitives.WriteInt32LittleEndian(older.AsSpan(8), version);
            Assert.Contains($"layout version {version}; this build reads version 3", Refusal(older));
        }

        var inconsistent = (byte[])valid.Clone();
        BinaryPrimitives.WriteInt32LittleEndian(inconsistent.AsSpan(24), 3);
        Assert.Contains("slot count 3 is not a power of two", Refusal(inconsistent));

        // And a subscriber expecting larger messages than the ring was made for.
        var tooLarge = new SubscriberOptions(ring.Environment, ring.Key, 0, [new PublisherAddress(0, ring.Publisher.Address)], 1, 1, 2 * SlotData, WaitMode.Yield, false);
        Assert.Contains("carries messages of up to 1024 bytes", Assert.Throws<InvalidDataException>(() => transport.CreateSubscriber(tooLarge, CancellationToken.None)).Message);
    }

    [Fact]
    public void The_file_is_named_after_owner_scenario_and_publisher_and_removed_on_dispose()
    {
        var ring = Ring.Create(SmallRing(), SlotData, subscribers: 1, WaitMode.Yield, publisherIndex: 3);
        var path = ring.Publisher.Address;
        try
        {
            Assert.Equal($"/dev/shm/ipcbench.ring.{Environment.ProcessId}.{ring.Key}.p3", path);
            Assert.True(File.Exists(path));
            SendSequence(ring.Publisher, 3, 100);
            ring.Publisher.Dispose();
            Assert.False(File.Exists(path));

            // The subscriber's own mapping outlives the file: it drains what was sent, then sees the close.
            var receiver = ring.Receiver(0);
            for (long seq = 0; seq < 3; seq++)
            {
                Assert.True(receiver.TryReceive(out var message, CancellationToken.None));
                Verify(message, seq, 100);
                receiver.Release();
            }

            Assert.False(receiver.TryReceive(out _, CancellationToken.None));
        }
        finally
        {
            ring.Dispose();
        }

        Assert.Empty(Directory.GetFiles("/dev/shm", $"ipcbench.ring.{Environment.ProcessId}.{ring.Key}.*"));
    }

    [Fact]
    public void RemoveStaleResources_removes_rings_of_dead_owners_only()
    {
        var directory = Directory.CreateTempSubdirectory("ipcbench-shm-").FullName;
        try
        {
            using var finished = Process.Start(new ProcessStartInfo("true") { UseShellExecute = false })!;
            finished.WaitForExit();
            int deadPid = finished.Id;
            var dead = Path.Combine(directory, $"ipcbench.ring.{deadPid}.abc.p0");
            var mine = Path.Combine(directory, $"ipcbench.ring.{Environment.ProcessId}.abc.p0");
            var otherLiveDaemon = Path.Combine(directory, "ipcbench.ring.1.abc.p0");
            var unrelated = Path.Combine(directory, $"something.{deadPid}.else");
            foreach (var file in new[] { dead, mine, otherLiveDaemon, unrelated })
            {
                File.WriteAllBytes(file, [1, 2, 3]);
            }

            SmallRing(directory: directory).RemoveStaleResources(new TransportEnvironment(directory, Environment.ProcessId));

            Assert.False(File.Exists(dead));
            Assert.True(File.Exists(mine));
            Assert.True(File.Exists(otherLiveDaemon));
            Assert.True(File.Exists(unrelated));
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Theory]
    [InlineData(WaitMode.Spin)]
    [InlineData(WaitMode.Yield)]
    [InlineData(WaitMode.Block)]
    public void Disposing_the_publisher_wakes_a_waiting_receiver(WaitMode mode)
    {
        using var ring = Ring.Create(SmallRing(), SlotData, subscribers: 1, mode);
        var receiver = ring.Receiver(0);
        var waiting = Worker.Start(() => receiver.TryReceive(out _, CancellationToken.None));
        Thread.Sleep(200);
        Assert.False(waiting.IsCompleted);

        var stopwatch = Stopwatch.StartNew();
        ring.Publisher.Dispose();
        Assert.True(waiting.Join(TimeSpan.FromSeconds(2)));
        Assert.False(waiting.Complete(Timeout));
        Assert.True(stopwatch.Elapsed < TimeSpan.FromMilliseconds(mode == WaitMode.Block ? 90 : 500), $"took {stopwatch.Elapsed}");
    }

    [Fact]
    public void Disposing_the_subscriber_wakes_its_blocked_receiver_and_detaches_its_cursor()
    {
        using var ring = Ring.Create(SmallRing(), SlotData, subscribers: 1, WaitMode.Block);
        var receiver = ring.Receiver(0);
        var waiting = Worker.Start(() => receiver.TryReceive(out _, CancellationToken.None));
        Thread.Sleep(200);

        var stopwatch = Stopwatch.StartNew();
        ring.Subscribers[0].Dispose();
        Assert.True(waiting.Join(TimeSpan.FromSeconds(2)));
        Assert.False(waiting.Complete(Timeout));
        Assert.True(stopwatch.Elapsed < TimeSpan.FromMilliseconds(90), $"took {stopwatch.Elapsed}");

        // Like a socket whose peer closed: the publisher reports it rather than sending into the void.
        var error = Assert.Throws<IOException>(() => SendSequence(ring.Publisher, 20, 64));
        Assert.Contains("detached", error.Message);
    }

    [Theory]
    [InlineData(WaitMode.Yield, 1000, false, 100_000)]
    [InlineData(WaitMode.Block, 1000, false, 100_000)]
    [InlineData(WaitMode.Yield, 3000, false, 30_000)]
    [InlineData(WaitMode.Yield, 64, true, 100_000)]
    [InlineData(WaitMode.Block, 64, true, 20_000)]
    [InlineData(WaitMode.Yield, 3000, false, 30_000, true)]
    [InlineData(WaitMode.Block, 3000, false, 30_000, true)]
    public void Publishing_and_receiving_allocate_nothing_per_message(WaitMode mode, int length, bool roundTrip, int messages, bool segmented = false)
    {
        const int Warmup = 2_000;
        using var ring = Ring.Create(SmallRing(), 4 * SlotData, subscribers: 1, mode, roundTrip: roundTrip);
        var receiver = ring.Receiver(0);
        long received = 0;
        var consumer = Worker.Start(() =>
        {
            Span<byte> echo = stackalloc byte[32];
            long before = 0;
            for (int i = 0; i < Warmup + messages; i++)
            {
                if (i == Warmup)
                {
                    before = GC.GetAllocatedBytesForCurrentThread();
                }

                ReadOnlySpan<byte> message;
                if (segmented)
                {
                    if (!receiver.TryReceiveFirstSegment(out message, out _, CancellationToken.None))
                    {
                        throw new InvalidOperationException("closed early");
                    }

                    received += message[0];
                    while (receiver.TryReceiveNextSegment(out var segment, CancellationToken.None))
                    {
                        received += segment[0] - 1;
                    }
                }
                else
                {
                    if (!receiver.TryReceive(out message, CancellationToken.None))
                    {
                        throw new InvalidOperationException("closed early");
                    }

                    received += message[0];
                }

                if (roundTrip)
                {
                    message[..32].CopyTo(echo);
                    receiver.Reply(echo);
                }

                receiver.Release();
            }

            return GC.GetAllocatedBytesForCurrentThread() - before;
        });

        long publisherAllocated = 0;
        for (int i = 0; i < Warmup + messages; i++)
        {
            if (i == Warmup)
            {
                publisherAllocated = GC.GetAllocatedBytesForCurrentThread();
            }

            if (segmented)
            {
                var segment = ring.Publisher.LoanFirstSegment(length);
                do
                {
                    segment[0] = 1;
                }
                while (!(segment = ring.Publisher.LoanNextSegment()).IsEmpty);
            }
            else
            {
                ring.Publisher.Loan(length)[0] = 1;
            }

            ring.Publisher.Send();
            if (roundTrip)
            {
                Assert.True(ring.Publisher.TryReceiveReply(out _, CancellationToken.None));
                ring.Publisher.ReleaseReply();
            }
        }

        publisherAllocated = GC.GetAllocatedBytesForCurrentThread() - publisherAllocated;
        long receiverAllocated = consumer.Complete(TimeSpan.FromSeconds(60));
        Assert.Equal(0, publisherAllocated);
        Assert.Equal(0, receiverAllocated);
        Assert.Equal(Warmup + messages, received);
    }

    [Theory]
    [InlineData(WaitMode.Spin, 1, false)]
    [InlineData(WaitMode.Yield, 2, false)]
    [InlineData(WaitMode.Yield, 2, true)]
    [InlineData(WaitMode.Spin, 1, true)]
    public void The_engine_loop_delivers_everything_in_polling_wait_modes(WaitMode mode, int subscribers, bool roundTrip)
    {
        var transport = TransportRegistry.CreateDefault().Find("shm-ring")!;
        var outcome = InProcessLoop.Run(transport, publishers: 1, subscribers, payloadBytes: roundTrip ? 16 : 100_000, messagesPerPublisher: 2_000, roundTrip: roundTrip, waitMode: mode);

        Assert.Equal(2_000 * subscribers, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Corrupted + outcome.Received.Lost + outcome.Received.Duplicated + outcome.BadEchoes);
    }

    [Fact]
    public void Large_messages_are_chunked_and_reassembled_by_the_engine_loop()
    {
        var transport = TransportRegistry.CreateDefault().Find("shm-ring")!;
        var outcome = InProcessLoop.Run(transport, publishers: 1, subscribers: 2, payloadBytes: 4 * 1024 * 1024, messagesPerPublisher: 40);

        Assert.Equal(80, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.Corrupted + outcome.Received.Lost);
    }

    private static void SendSequence(IPublisherEndpoint publisher, int count, int length)
    {
        for (long seq = 0; seq < count; seq++)
        {
            Fill(publisher.Loan(length), seq);
            publisher.Send();
        }
    }

    private static void Fill(Span<byte> message, long seq)
    {
        BinaryPrimitives.WriteInt64LittleEndian(message, seq);
        for (int i = 8; i < message.Length; i++)
        {
            message[i] = (byte)(seq * 131 + i * 7);
        }
    }

    private static void Verify(ReadOnlySpan<byte> message, long seq, int length)
    {
        Assert.Equal(length, message.Length);
        Assert.Equal(seq, BinaryPrimitives.ReadInt64LittleEndian(message));
        for (int i = 8; i < message.Length; i++)
        {
            if (message[i] != (byte)(seq * 131 + i * 7))
            {
                Assert.Fail($"message {seq} ({length} bytes) differs at byte {i}");
            }
        }
    }

    /// <summary>A dedicated thread, as the engine gives each endpoint; exceptions surface in <see cref="Complete"/>.</summary>
    private sealed class Worker<T>
    {
        private readonly Thread _thread;
        private T? _result;

        public Worker(Func<T> body)
        {
            _thread = new Thread(() =>
            {
                try
                {
                    _result = body();
                }
                catch (Exception e)
                {
                    Error = e;
                }
            })
            { IsBackground = true };
            _thread.Start();
        }

        public Exception? Error { get; private set; }

        public bool IsCompleted => !_thread.IsAlive;

        public bool Join(TimeSpan timeout) => _thread.Join(timeout);

        public T Complete(TimeSpan timeout)
        {
            Assert.True(_thread.Join(timeout), $"worker still running after {timeout}");
            if (Error is not null)
            {
                System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(Error);
            }

            return _result!;
        }
    }

    private static class Worker
    {
        public static Worker<T> Start<T>(Func<T> body) => new(body);

        public static Worker<bool> Start(Action body) => new(() =>
        {
            body();
            return true;
        });
    }

    /// <summary>A publisher endpoint and subscribers attached to it, driven directly by the test.</summary>
    private sealed class Ring : IDisposable
    {
        private Ring(ShmRingPublisher publisher, TransportEnvironment environment, string key, int maxMessage, WaitMode mode, bool roundTrip)
        {
            Publisher = publisher;
            Environment = environment;
            Key = key;
            MaxMessage = maxMessage;
            Mode = mode;
            RoundTrip = roundTrip;
        }

        public ShmRingPublisher Publisher { get; }

        public TransportEnvironment Environment { get; }

        public string Key { get; }

        public int MaxMessage { get; }

        public WaitMode Mode { get; }

        public bool RoundTrip { get; }

        public List<ShmRingSubscriberEndpoint> Subscribers { get; } = [];

        public static Ring Create(ShmRingTransport transport, int maxMessage, int subscribers, WaitMode mode, bool roundTrip = false, int publisherIndex = 0)
        {
            var environment = new TransportEnvironment(Path.GetTempPath(), System.Environment.ProcessId);
            var key = Guid.NewGuid().ToString("N")[..12];
            var publisher = (ShmRingPublisher)transport.CreatePublisher(
                new PublisherOptions(environment, key, publisherIndex, subscribers, 1, subscribers, maxMessage, mode, roundTrip));
            var ring = new Ring(publisher, environment, key, maxMessage, mode, roundTrip);
            for (int s = 0; s < subscribers; s++)
            {
                ring.AddSubscriber(transport, s);
            }

            publisher.WaitForSubscribers(subscribers, TimeSpan.FromSeconds(5), CancellationToken.None);
            return ring;
        }

        public ShmRingSubscriberEndpoint AddSubscriber(ShmRingTransport transport, int index)
        {
            var options = new SubscriberOptions(Environment, Key, index, [new PublisherAddress(0, Publisher.Address)], 1, Subscribers.Count + 1, MaxMessage, Mode, RoundTrip);
            var subscriber = (ShmRingSubscriberEndpoint)transport.CreateSubscriber(options, CancellationToken.None);
            Subscribers.Add(subscriber);
            return subscriber;
        }

        public ShmRingReceiver Receiver(int subscriber) => Subscribers[subscriber].RingReceivers[0];

        public void Dispose()
        {
            Subscribers.ForEach(s => s.Dispose());
            Publisher.Dispose();
        }
    }
}
