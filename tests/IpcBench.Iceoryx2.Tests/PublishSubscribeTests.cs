using System.Diagnostics;
using IpcBench.Iceoryx2.TestPeer;
using IpcBench.Transports.Tests;
using Xunit.Abstractions;

namespace IpcBench.Iceoryx2.Tests;

public class PublishSubscribeTests(ITestOutputHelper output)
{
    private static PublishSubscribeOptions NoLoss(int size) => new()
    {
        MaxMessageSize = size,
        MaxPublishers = 1,
        MaxSubscribers = 1,
        MaxNodes = 4,
        SubscriberBufferSize = 32,
        SubscriberMaxBorrowedSamples = 4,
        PublisherMaxLoanedSamples = 2,
        DeliveryMode = DeliveryMode.NoLoss,
    };

    [Iceoryx2Fact]
    public void Library_is_available_and_built()
    {
        Assert.True(Iceoryx2Library.IsAvailable, Iceoryx2Library.UnavailableReason);
        Assert.Null(Iceoryx2Library.UnavailableReason);
        Assert.Equal("ok", Iceoryx2Library.NativeBuildStatus);
    }

    [Iceoryx2Fact]
    public void Two_threads_exchange_100k_1KB_messages_without_loss_zero_copy()
    {
        const int count = 100_000;
        const int size = 1024;
        string service = TestNames.UniqueService("pubsub-zero-copy");
        var options = NoLoss(size);

        using var pubNode = Iceoryx2Node.Create("test-pub");
        using var subNode = Iceoryx2Node.Create("test-sub");
        using var subscriber = subNode.CreateSubscriber(service, options);
        using var publisher = pubNode.CreatePublisher(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(10)));
        Assert.True(subscriber.WaitForPublishers(1, TimeSpan.FromSeconds(10)));

        long received = 0, corrupt = 0, outOfOrder = 0;
        Exception? subError = null;
        var subThread = new Thread(() =>
        {
            try
            {
                var sample = default(ReceivedSample);
                var sw = Stopwatch.StartNew();
                while (received < count && sw.Elapsed < TimeSpan.FromSeconds(60))
                {
                    if (!subscriber.ReleaseAndTryReceive(ref sample))
                    {
                        Thread.Yield();
                        continue;
                    }

                    if (sample.Length != size || Pattern.SequenceOf(sample.Payload) != received)
                    {
                        outOfOrder++;
                    }
                    else if (!Pattern.Verify(sample.Payload, (ulong)received))
                    {
                        corrupt++;
                    }

                    received++;
                }

                if (!sample.IsEmpty)
                {
                    subscriber.Release(sample);
                }
            }
            catch (Exception e)
            {
                subError = e;
            }
        });
        subThread.Start();

        var total = Stopwatch.StartNew();
        long notDelivered = 0;
        for (long seq = 0; seq < count; seq++)
        {
            var loan = publisher.Loan(size);
            Pattern.Fill(loan.Payload, (ulong)seq);
            if (loan.Send() != 1)
            {
                notDelivered++;
            }
        }

        Assert.True(subThread.Join(TimeSpan.FromSeconds(90)), "subscriber thread did not finish");
        total.Stop();
        Assert.Null(subError);
        Assert.Equal(0, notDelivered);
        Assert.Equal(count, received);
        Assert.Equal(0, outOfOrder);
        Assert.Equal(0, corrupt);
        output.WriteLine($"{count} x {size} B in {total.ElapsedMilliseconds} ms ({count / total.Elapsed.TotalSeconds:N0} msg/s, test build, includes pattern fill/verify)");
    }

    [Iceoryx2Fact]
    public void Two_threads_exchange_100k_1KB_messages_without_loss_copy_and_batch()
    {
        const int count = 100_000;
        const int size = 1024;
        string service = TestNames.UniqueService("pubsub-copy");
        var options = NoLoss(size) with { SubscriberMaxBorrowedSamples = 16, SubscriberBufferSize = 64 };

        using var pubNode = Iceoryx2Node.Create();
        using var subNode = Iceoryx2Node.Create();
        using var publisher = pubNode.CreatePublisher(service, options);
        using var subscriber = subNode.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(10)));

        long received = 0, bad = 0;
        var subThread = new Thread(() =>
        {
            var batch = new ReceivedSample[16];
            var sw = Stopwatch.StartNew();
            while (received < count && sw.Elapsed < TimeSpan.FromSeconds(60))
            {
                int n = subscriber.TryReceiveBatch(batch);
                if (n == 0)
                {
                    Thread.Yield();
                    continue;
                }

                for (int i = 0; i < n; i++)
                {
                    if (!Pattern.Verify(batch[i].Payload, (ulong)received))
                    {
                        bad++;
                    }

                    received++;
                }

                Assert.Equal(n, subscriber.ReleaseAll());
            }
        });
        subThread.Start();

        var buffer = new byte[size];
        for (long seq = 0; seq < count; seq++)
        {
            Pattern.Fill(buffer, (ulong)seq);
            Assert.Equal(1, publisher.SendCopy(buffer));
        }

        Assert.True(subThread.Join(TimeSpan.FromSeconds(90)));
        Assert.Equal(count, received);
        Assert.Equal(0, bad);
    }

    [Iceoryx2Fact]
    public void Receive_copy_returns_the_bytes_and_reports_no_sample()
    {
        string service = TestNames.UniqueService("receive-copy");
        var options = NoLoss(64);
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, options);
        using var subscriber = node.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));

        var buf = new byte[64];
        Assert.False(subscriber.TryReceiveCopy(buf, out _));
        Assert.False(subscriber.HasSamples);

        Assert.Equal(1, publisher.SendCopy("hello"u8));
        Assert.True(subscriber.HasSamples);
        Assert.True(subscriber.TryReceiveCopy(buf, out int len));
        Assert.Equal("hello"u8.ToArray(), buf[..len]);

        // an empty message is legal
        Assert.Equal(1, publisher.SendCopy(ReadOnlySpan<byte>.Empty));
        Assert.True(subscriber.TryReceive(out var empty));
        Assert.Equal(0, empty.Length);
        subscriber.Release(empty);

        // destination too small: clear error, sample consumed
        publisher.SendCopy(new byte[32]);
        var ex = Assert.Throws<Iceoryx2Exception>(() => subscriber.TryReceiveCopy(new byte[8], out _));
        Assert.Equal(Iceoryx2ErrorCode.BufferTooSmall, ex.ErrorCode);
        Assert.False(subscriber.TryReceive(out _));
    }

    [Iceoryx2Fact]
    public void Lossy_mode_keeps_only_the_newest_samples_and_never_blocks()
    {
        string service = TestNames.UniqueService("lossy");
        var options = NoLoss(16) with { DeliveryMode = DeliveryMode.Lossy, SubscriberBufferSize = 2 };
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, options);
        using var subscriber = node.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));
        Assert.Equal(DeliveryMode.Lossy, publisher.GetServiceInfo().DeliveryMode);

        var buf = new byte[16];
        for (ulong i = 0; i < 100; i++)
        {
            BitConverter.TryWriteBytes(buf, i);
            publisher.SendCopy(buf);
        }

        var seen = new List<long>();
        while (subscriber.TryReceive(out var s))
        {
            seen.Add(Pattern.SequenceOf(s.Payload));
            subscriber.Release(s);
        }

        Assert.Equal([98L, 99L], seen);
    }

    [Iceoryx2Fact]
    public void No_loss_send_times_out_with_a_clear_error_when_the_subscriber_stalls()
    {
        string service = TestNames.UniqueService("send-timeout");
        var options = NoLoss(16) with { SubscriberBufferSize = 2, SendTimeout = TimeSpan.FromMilliseconds(100) };
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, options);
        using var subscriber = node.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));

        var payload = new byte[16];
        publisher.SendCopy(payload);
        publisher.SendCopy(payload);
        var sw = Stopwatch.StartNew();
        var ex = Assert.Throws<Iceoryx2Exception>(() => publisher.SendCopy(payload));
        Assert.Equal(Iceoryx2ErrorCode.DeliveryTimeout, ex.ErrorCode);
        Assert.InRange(sw.ElapsedMilliseconds, 50, 10_000);
        output.WriteLine(ex.Message);
    }

    [Iceoryx2Fact]
    public void Sample_payload_is_a_view_of_the_same_memory_the_publisher_wrote()
    {
        string service = TestNames.UniqueService("zero-copy");
        var options = NoLoss(4096);
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, options);
        using var subscriber = node.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));

        var loan = publisher.Loan(3000);
        Assert.Equal(3000, loan.Payload.Length);
        Pattern.Fill(loan.Payload, 42);
        Assert.Equal(1, loan.Send());

        Assert.True(subscriber.TryReceive(out var sample));
        Assert.Equal(3000, sample.Length);
        Assert.True(Pattern.Verify(sample.Payload, 42));
        subscriber.Release(sample);

        // releasing twice is a clear error, not a crash
        var ex = Assert.Throws<Iceoryx2Exception>(() => subscriber.Release(sample));
        Assert.Equal(Iceoryx2ErrorCode.InvalidToken, ex.ErrorCode);
    }

    [Iceoryx2Fact]
    public void Cross_process_100k_1KB_messages_without_loss()
    {
        const int count = 100_000;
        const int size = 1024;
        string service = TestNames.UniqueService("cross-process");
        string peer = Path.Combine(AppContext.BaseDirectory, "IpcBench.Iceoryx2.TestPeer.dll");
        Assert.True(File.Exists(peer), $"{peer} missing");

        using var node = Iceoryx2Node.Create("test-cross-sub");
        using var subscriber = node.CreateSubscriber(service, Pattern.CrossProcessOptions(size));

        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(peer);
        psi.ArgumentList.Add("publish");
        psi.ArgumentList.Add(service);
        psi.ArgumentList.Add(count.ToString(System.Globalization.CultureInfo.InvariantCulture));
        psi.ArgumentList.Add(size.ToString(System.Globalization.CultureInfo.InvariantCulture));
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();

        try
        {
            Assert.True(subscriber.WaitForPublishers(1, TimeSpan.FromSeconds(60)), "the peer publisher did not appear");
            long received = 0, bad = 0;
            var sample = default(ReceivedSample);
            var sw = Stopwatch.StartNew();
            while (received < count && sw.Elapsed < TimeSpan.FromSeconds(120))
            {
                if (!subscriber.ReleaseAndTryReceive(ref sample))
                {
                    if (process.HasExited)
                    {
                        break;
                    }

                    Thread.Yield();
                    continue;
                }

                if (sample.Length != size || !Pattern.Verify(sample.Payload, (ulong)received))
                {
                    bad++;
                }

                received++;
            }

            if (!sample.IsEmpty)
            {
                subscriber.Release(sample);
            }

            Assert.Equal(count, received);
            Assert.Equal(0, bad);
            output.WriteLine($"cross-process: {count} x {size} B in {sw.ElapsedMilliseconds} ms");
        }
        finally
        {
            subscriber.Dispose(); // lets the peer finish
            if (!process.WaitForExit(60_000))
            {
                process.Kill(entireProcessTree: true);
            }

            output.WriteLine($"peer stdout: {stdout.Result}");
            output.WriteLine($"peer stderr: {stderr.Result}");
        }

        Assert.Equal(0, process.ExitCode);
    }

    [Iceoryx2Fact]
    public void Hot_path_does_not_allocate()
    {
        string service = TestNames.UniqueService("no-alloc");
        var options = NoLoss(256) with { SubscriberBufferSize = 8, SubscriberMaxBorrowedSamples = 8 };
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, options);
        using var subscriber = node.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));
        var payload = new byte[200];
        var copyBuffer = new byte[256];
        var batch = new ReceivedSample[4];

        void Round()
        {
            var loan = publisher.Loan(100);
            loan.Payload.Fill(1);
            loan.Send();
            var sample = default(ReceivedSample);
            subscriber.ReleaseAndTryReceive(ref sample);
            subscriber.Release(sample);
            publisher.SendCopy(payload);
            subscriber.TryReceiveCopy(copyBuffer, out _);
            publisher.SendCopy(payload);
            subscriber.TryReceiveBatch(batch);
            subscriber.ReleaseAll();
            publisher.Loan(100, out ulong token).Fill(2);
            publisher.SendAndLoan(token, 100, out token, out var next);
            next.Fill(3);
            publisher.SendAndLoan(token, 100, out token, out _);
            publisher.Discard(token);
            int held = subscriber.ReleaseAndTryReceiveBatch(batch, 0);
            subscriber.ReleaseAndTryReceiveBatch(batch, held);
            subscriber.TryReceive(out _);
        }

        // After a first run that warms up (JIT, tiering, P/Invoke stubs), the least of three: the runtime's one-off work
        // on this thread (a tier-up, a type load) lands in one run, an allocation of the hot path in each.
        Assert.Equal(0, ThreadAllocations.LeastOf(3, () =>
        {
            for (int i = 0; i < 10_000; i++)
            {
                Round();
            }
        }));
    }
}
