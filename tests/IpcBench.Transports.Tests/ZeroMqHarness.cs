using System.Diagnostics;
using static IpcBench.Transports.Tests.ZeroMqHarness;

namespace IpcBench.Transports.Tests;

/// <summary>What ZeroMqTransportTests drive the zeromq endpoints with, on threads of the test process.</summary>
internal static class ZeroMqHarness
{
    public const int PayloadBytes = 1000;
    public const int MessageBytes = MessageHeader.Size + PayloadBytes;
    public static readonly TimeSpan WaitLimit = TimeSpan.FromSeconds(20);

    public static void WriteMessage(IPublisherEndpoint publisher, long sequence)
    {
        var message = publisher.Loan(MessageBytes);
        new MessageHeader { PayloadLength = PayloadBytes, Sequence = sequence }.Write(message);
    }

    public static string Key() => Guid.NewGuid().ToString("N")[..8];

    // zeromq keeps nothing on disk; the directory is only part of the contract.
    public static TransportEnvironment TestEnvironment() => new(Path.GetTempPath(), Environment.ProcessId);

    public static PublisherOptions PublisherOptionsFor(string key, int subscribers, WaitMode mode, bool roundTrip) =>
        new(TestEnvironment(), key, 0, subscribers, 1, subscribers, MessageBytes, mode, roundTrip);
}

/// <summary>One publisher endpoint and its subscribers, connected, on this process's threads.</summary>
internal sealed class ZeroMqPair : IDisposable
{
    private ZeroMqPair(IPublisherEndpoint publisher, List<ISubscriberEndpoint> subscribers)
    {
        Publisher = publisher;
        Subscribers = subscribers;
    }

    public IPublisherEndpoint Publisher { get; }

    public List<ISubscriberEndpoint> Subscribers { get; }

    public static ZeroMqPair Open(int subscribers, WaitMode mode, bool roundTrip = false)
    {
        var transport = new ZeroMq.ZeroMqTransport();
        string key = Key();
        var publisher = transport.CreatePublisher(PublisherOptionsFor(key, subscribers, mode, roundTrip));
        var connected = new List<ISubscriberEndpoint>();
        using var cancel = new CancellationTokenSource(WaitLimit);
        for (int s = 0; s < subscribers; s++)
        {
            connected.Add(transport.CreateSubscriber(new SubscriberOptions(
                TestEnvironment(), key, s, [new PublisherAddress(0, publisher.Address)], 1, subscribers, MessageBytes, mode, roundTrip), cancel.Token));
        }

        publisher.WaitForSubscribers(subscribers, WaitLimit, cancel.Token);
        return new ZeroMqPair(publisher, connected);
    }

    public void Dispose()
    {
        Subscribers.ForEach(s => s.Dispose());
        Publisher.Dispose();
    }
}

/// <summary>A publisher sending numbered messages as fast as it may on its own thread, as PublisherWorker does.</summary>
internal sealed class PublishingThread : IDisposable
{
    private readonly Thread _thread;
    private long _sent;

    public PublishingThread(IPublisherEndpoint publisher, long total)
    {
        _thread = new Thread(() =>
        {
            try
            {
                for (long sequence = 0; sequence < total; sequence++)
                {
                    WriteMessage(publisher, sequence);
                    publisher.Send();
                    Volatile.Write(ref _sent, sequence + 1);
                }
            }
            catch (Exception e)
            {
                Failure = e;
            }
        })
        { IsBackground = true, Name = "zeromq-test-publisher" };
        _thread.Start();
    }

    public long Sent => Volatile.Read(ref _sent);

    public Exception? Failure { get; private set; }

    /// <summary>Waits until the count sent stops growing for half a second, and returns it.</summary>
    public long WaitUntilBlocked()
    {
        var clock = Stopwatch.StartNew();
        long last = -1;
        var since = clock.Elapsed;
        while (clock.Elapsed < WaitLimit)
        {
            Thread.Sleep(50);
            long now = Sent;
            if (now != last)
            {
                last = now;
                since = clock.Elapsed;
            }
            else if (clock.Elapsed - since > TimeSpan.FromMilliseconds(500))
            {
                Assert.Null(Failure);
                return now;
            }
        }

        throw new TimeoutException($"The publisher never blocked (sent {Sent}).");
    }

    public void Join() => Assert.True(_thread.Join(WaitLimit), "the publisher did not finish");

    public bool Join(TimeSpan timeout) => _thread.Join(timeout);

    public void Dispose() => _thread.Join(TimeSpan.FromSeconds(5));
}
