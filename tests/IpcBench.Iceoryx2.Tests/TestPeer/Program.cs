using System.Diagnostics;
using System.Globalization;
using IpcBench.Iceoryx2;
using IpcBench.Iceoryx2.TestPeer;

return args.Length > 0 ? args[0] switch
{
    "publish" => Peer.Publish(args),
    "bench" => Peer.Bench(args),
    _ => Peer.Usage(),
} : Peer.Usage();

internal static class Peer
{
    public static int Usage()
    {
        Console.Error.WriteLine("usage: publish <service> <count> <size> | bench [count] [size...]");
        return 2;
    }

    /// <summary>Publishes count messages of size bytes (Pattern content) once a subscriber is connected.</summary>
    public static int Publish(string[] args)
    {
        if (args.Length < 4)
        {
            return Usage();
        }

        string service = args[1];
        long count = long.Parse(args[2], CultureInfo.InvariantCulture);
        int size = int.Parse(args[3], CultureInfo.InvariantCulture);
        if (!Iceoryx2Library.IsAvailable)
        {
            Console.Error.WriteLine($"iceoryx2 unavailable: {Iceoryx2Library.UnavailableReason}");
            return 3;
        }

        using var node = Iceoryx2Node.Create("ipcbench-test-peer");
        using var publisher = node.CreatePublisher(service, Pattern.CrossProcessOptions(size));
        Console.WriteLine("ready");
        if (!publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(60)))
        {
            Console.Error.WriteLine("no subscriber within 60 s");
            return 4;
        }

        for (long seq = 0; seq < count; seq++)
        {
            var loan = publisher.Loan(size);
            Pattern.Fill(loan.Payload, (ulong)seq);
            int receivers = loan.Send();
            if (receivers != 1)
            {
                Console.Error.WriteLine($"message {seq} reached {receivers} subscribers");
                return 5;
            }
        }

        // Keep the publisher (and its data segment) alive until the subscriber has gone away.
        var sw = Stopwatch.StartNew();
        while (publisher.GetServiceInfo().Subscribers > 0 && sw.Elapsed < TimeSpan.FromSeconds(60))
        {
            Thread.Sleep(5);
        }

        Console.WriteLine($"sent {count}");
        return 0;
    }

    /// <summary>1:1 throughput, publisher and spinning subscriber on two threads of this process.</summary>
    public static int Bench(string[] args)
    {
        long count = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 1_000_000;
        int[] sizes = args.Length > 2 ? args[2..].Select(s => int.Parse(s, CultureInfo.InvariantCulture)).ToArray() : [8, 1024];
        if (!Iceoryx2Library.IsAvailable)
        {
            Console.Error.WriteLine($"iceoryx2 unavailable: {Iceoryx2Library.UnavailableReason}");
            return 3;
        }

        foreach (int size in sizes)
        {
            foreach (var api in new[] { "loan/send + release&receive", "send_copy + receive_copy" })
            {
                // warm-up run, then the measured one
                Run(size, Math.Min(count, 50_000), api, print: false);
                Run(size, count, api, print: true);
            }
        }

        return 0;
    }

    private static void Run(int size, long count, string api, bool print)
    {
        string service = $"ipcbench/bench/{Guid.NewGuid():N}";
        var options = new PublishSubscribeOptions
        {
            MaxMessageSize = Math.Max(size, 8),
            MaxPublishers = 1,
            MaxSubscribers = 1,
            MaxNodes = 2,
            SubscriberBufferSize = 256,
            SubscriberMaxBorrowedSamples = 4,
            PublisherMaxLoanedSamples = 4,
            DeliveryMode = DeliveryMode.NoLoss,
        };
        bool copy = api.StartsWith("send_copy", StringComparison.Ordinal);
        using var pubNode = Iceoryx2Node.Create("bench-pub");
        using var subNode = Iceoryx2Node.Create("bench-sub");
        using var publisher = pubNode.CreatePublisher(service, options);
        using var subscriber = subNode.CreateSubscriber(service, options);
        publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(10));
        subscriber.WaitForPublishers(1, TimeSpan.FromSeconds(10));

        long received = 0;
        long badSeq = 0;
        var subThread = new Thread(() =>
        {
            var sample = default(ReceivedSample);
            Span<byte> buf = stackalloc byte[Math.Max(size, 8)];
            long expected = 0;
            while (expected < count)
            {
                if (copy)
                {
                    if (subscriber.TryReceiveCopy(buf, out int len))
                    {
                        if (len >= 8 && Pattern.SequenceOf(buf[..len]) != expected)
                        {
                            badSeq++;
                        }

                        expected++;
                    }
                }
                else if (subscriber.ReleaseAndTryReceive(ref sample))
                {
                    if (sample.Length >= 8 && Pattern.SequenceOf(sample.Payload) != expected)
                    {
                        badSeq++;
                    }

                    expected++;
                }
            }

            if (!sample.IsEmpty)
            {
                subscriber.Release(sample);
            }

            received = expected;
        })
        { IsBackground = true, Name = "bench-subscriber" };

        byte[] src = new byte[size];
        var sw = Stopwatch.StartNew();
        subThread.Start();
        for (long seq = 0; seq < count; seq++)
        {
            if (copy)
            {
                if (size >= 8)
                {
                    BitConverter.TryWriteBytes(src, (ulong)seq);
                }

                publisher.SendCopy(src);
            }
            else
            {
                var loan = publisher.Loan(size);
                if (size >= 8)
                {
                    BitConverter.TryWriteBytes(loan.Payload, (ulong)seq);
                }

                loan.Send();
            }
        }

        subThread.Join();
        sw.Stop();
        if (print)
        {
            double rate = received / sw.Elapsed.TotalSeconds;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"size={size,5} B  api={api,-28} messages={received}  {rate,12:N0} msg/s  {rate * size / 1e6,9:N1} MB/s  {sw.Elapsed.TotalMilliseconds * 1e6 / received,7:N0} ns/msg  seq errors={badSeq}"));
        }
    }
}
