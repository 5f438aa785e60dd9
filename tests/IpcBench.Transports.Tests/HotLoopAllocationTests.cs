using IpcBench.Transports;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The publisher's and the receiver's loop allocate nothing per message, on every transport in the registry (but those
/// that declare <see cref="TransportCapabilities.HotLoopAllocations"/>, held to that instead), in every
/// wait strategy it offers, FULL and HEADER_ONLY, streaming and round trip: each thread's allocation counter is read
/// after a warm-up and after each of two long stretches, from inside the loop (a wrapping path, itself compiled per
/// transport like the loop). The spinning and yielding cases; the blocking ones are <see cref="BlockingHotLoopAllocationTests"/>.
/// </summary>
[Collection(nameof(SerialMeasurements))]
public sealed class HotLoopAllocationTests
{
    public static TheoryData<string, WaitMode, bool, bool> Cases() => HotLoopAllocation.Cases(wait => wait != WaitMode.Block);

    [Theory]
    [MemberData(nameof(Cases))]
    public Task Hot_loops_allocate_nothing_per_message(string id, WaitMode wait, bool full, bool roundTrip) =>
        HotLoopAllocation.RunAsync(id, wait, full, roundTrip);
}

/// <summary>
/// <see cref="HotLoopAllocationTests"/> in the BLOCK wait: threads that sleep in the kernel between messages take no core
/// while they wait, and what is counted is bytes, not time, so these run in the light lane beside the spinning tests
/// (their round trips are most of this assembly's time: 27 of 35 s alone).
/// </summary>
[Collection(nameof(LightRuns))]
public sealed class BlockingHotLoopAllocationTests
{
    public static TheoryData<string, WaitMode, bool, bool> Cases() => HotLoopAllocation.Cases(wait => wait == WaitMode.Block);

    [Theory]
    [MemberData(nameof(Cases))]
    public Task Hot_loops_allocate_nothing_per_message(string id, WaitMode wait, bool full, bool roundTrip) =>
        HotLoopAllocation.RunAsync(id, wait, full, roundTrip);
}

/// <summary>One run of <see cref="HotLoopAllocationTests"/>: a publisher and its receivers on threads of this process.</summary>
internal static class HotLoopAllocation
{
    private const int WarmupMessages = 3_000;
    private const int MeasuredMessages = 20_000;
    private const int PayloadBytes = 1024;

    public static TheoryData<string, WaitMode, bool, bool> Cases(Func<WaitMode, bool> waits)
    {
        var data = new TheoryData<string, WaitMode, bool, bool>();
        foreach (var transport in TransportRegistry.CreateDefault().All.Where(t => t.UnavailableReason is null))
        {
            foreach (var wait in transport.Capabilities.WaitModes.Where(waits))
            {
                data.Add(transport.Id, wait, true, false);
                data.Add(transport.Id, wait, false, false);
            }

            if (transport.Capabilities.SupportsRoundTrip && waits(transport.Capabilities.DefaultWaitMode))
            {
                data.Add(transport.Id, transport.Capabilities.DefaultWaitMode, true, true);
            }
        }

        return data;
    }

    public static async Task RunAsync(string id, WaitMode wait, bool full, bool roundTrip)
    {
        var transport = TransportRegistry.CreateDefault().Find(id)!;
        var runtimeDirectory = Directory.CreateTempSubdirectory("ipcbench-alloc-").FullName;
        var environment = new TransportEnvironment(runtimeDirectory, Environment.ProcessId);
        var key = Guid.NewGuid().ToString("N")[..8];
        int maxMessage = MessageHeader.Size + PayloadBytes;
        var window = new MeasurementWindow();
        window.Start(0);
        var publisherMeter = new AllocationMeter();
        var receiverMeter = new AllocationMeter();
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var endpoint = transport.CreatePublisher(new PublisherOptions(environment, key, 0, 1, 1, 1, maxMessage, wait, roundTrip));
        ISubscriberEndpoint? subscriber = null;
        try
        {
            var accepting = Task.Run(() => endpoint.WaitForSubscribers(1, TimeSpan.FromSeconds(20), cancel.Token));
            subscriber = transport.CreateSubscriber(
                new SubscriberOptions(environment, key, 0, [new PublisherAddress(0, endpoint.Address)], 1, 1, maxMessage, wait, roundTrip), cancel.Token);
            await accepting.WaitAsync(cancel.Token);

            var plan = new SubscriberPlan(PayloadBytes, full, roundTrip, 1);
            var receivers = subscriber.Receivers.Select(r => new ReceiverWorker(new MeteredReceiver(r, receiverMeter), plan)).ToList();
            var publisher = new PublisherWorker(
                new AfterSendPublisher(endpoint, publisherMeter.Count),
                new PublisherPlan(0, PayloadBytes, full, 0, roundTrip, 1, wait, WarmupMessages + (2 * MeasuredMessages) + 100),
                window);
            var threads = receivers.Select(r => new Thread(() => r.Run(cancel.Token))).Append(new Thread(() => publisher.Run(cancel.Token))).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());

            Assert.False(cancel.IsCancellationRequested, "the run timed out");
            Assert.Equal(WarmupMessages + (2 * MeasuredMessages) + 100, receivers.Sum(r => r.Counters.Received));
            Assert.True(publisherMeter.Measured, "the publisher's meter saw the whole measured stretch");
            Assert.True(receiverMeter.Measured, "the receiver's meter saw the whole measured stretch");
            string run = $"{id} {wait} {(full ? "FULL" : "HEADER_ONLY")}{(roundTrip ? " round trip" : "")}";
            if (transport.Capabilities.HotLoopAllocations is null)
            {
                Assert.True(publisherMeter.Bytes == 0, $"{run}: the publisher's loop allocated {publisherMeter}");
                Assert.True(receiverMeter.Bytes == 0, $"{run}: the receiver's loop allocated {receiverMeter}");
            }
            else
            {
                // A declared exception stays true: once the transport stops allocating, its declaration must go.
                Assert.True(
                    publisherMeter.Bytes + receiverMeter.Bytes >= MeasuredMessages,
                    $"{run} declares that its loops allocate ({transport.Capabilities.HotLoopAllocations}) but they allocated only: publisher {publisherMeter}, receiver {receiverMeter}");
            }
        }
        finally
        {
            subscriber?.Dispose();
            endpoint.Dispose();
            Directory.Delete(runtimeDirectory, recursive: true);
        }
    }

    /// <summary>
    /// Reads the calling thread's allocation counter at message <see cref="WarmupMessages"/> and at the end of two
    /// stretches of <see cref="MeasuredMessages"/> after it. A loop that allocates per message (or every few hundred)
    /// allocates in both; a one-off lazy initialisation (a lock object the runtime makes the first time a thread
    /// really blocks) lands in one at most, so the lower of the two is the loop's steady cost.
    /// </summary>
    private sealed class AllocationMeter
    {
        private long _messages;
        private long _start;
        private long _first = -1;
        private long _second = -1;

        public bool Measured => _second >= 0;

        public long Bytes => Math.Min(_first, _second);

        public override string ToString() => $"{_first} and {_second} bytes over two stretches of {MeasuredMessages} messages";

        public void Count()
        {
            long count = ++_messages;
            if (count == WarmupMessages)
            {
                _start = GC.GetAllocatedBytesForCurrentThread();
            }
            else if (count == WarmupMessages + MeasuredMessages)
            {
                long now = GC.GetAllocatedBytesForCurrentThread();
                _first = now - _start;
                _start = now;
            }
            else if (count == WarmupMessages + (2 * MeasuredMessages))
            {
                _second = GC.GetAllocatedBytesForCurrentThread() - _start;
            }
        }
    }

    private sealed class MeteredReceiver(IMessageReceiver inner, AllocationMeter meter) : IMessageReceiver
    {
        public IReadOnlyList<int> PublisherIndexes => inner.PublisherIndexes;

        public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken) => inner.TryReceive(out message, cancellationToken);

        public void Reply(ReadOnlySpan<byte> message) => inner.Reply(message);

        public void Release() => inner.Release();

        public void Run(IReceiverLoop loop) => inner.Run(new Wrapping(loop, meter));

        private sealed class Wrapping(IReceiverLoop loop, AllocationMeter meter) : IReceiverLoop
        {
            public void Run<TInner>(TInner path)
                where TInner : struct, IReceiverPath => loop.Run(new Path<TInner>(path, meter));
        }

        private readonly struct Path<TInner>(TInner inner, AllocationMeter meter) : IReceiverPath
            where TInner : struct, IReceiverPath
        {
            public bool Segmented => inner.Segmented;

            public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken) =>
                inner.TryReceiveFirstSegment(out segment, out messageLength, cancellationToken);

            public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken) =>
                inner.TryReceiveNextSegment(out segment, cancellationToken);

            public void Reply(ReadOnlySpan<byte> message) => inner.Reply(message);

            public void Release()
            {
                inner.Release();
                meter.Count();
            }
        }
    }
}
