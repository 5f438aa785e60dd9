using System.Diagnostics;

namespace IpcBench.Iceoryx2.Tests;

public class EventAndCleanupTests
{
    [Iceoryx2Fact]
    public void Listener_wait_times_out_without_notification()
    {
        string service = TestNames.UniqueService("event-timeout");
        using var node = Iceoryx2Node.Create();
        using var listener = node.CreateListener(service);
        using var notifier = node.CreateNotifier(service);
        Assert.False(listener.TryWait());

        var sw = Stopwatch.StartNew();
        Assert.False(listener.Wait(TimeSpan.FromMilliseconds(200)));
        Assert.InRange(sw.ElapsedMilliseconds, 150, 5_000);
    }

    [Iceoryx2Fact]
    public void Listener_wakes_up_on_notify_from_another_thread()
    {
        string service = TestNames.UniqueService("event-wake");
        using var node = Iceoryx2Node.Create();
        using var listener = node.CreateListener(service);
        using var notifier = node.CreateNotifier(service);
        Assert.Equal(1, notifier.ListenerCount);
        Assert.Equal(1, listener.NotifierCount);

        var notifyThread = new Thread(() =>
        {
            Thread.Sleep(100);
            notifier.Notify();
        });
        var sw = Stopwatch.StartNew();
        notifyThread.Start();
        Assert.True(listener.Wait(TimeSpan.FromSeconds(10), out ulong n));
        Assert.True(n >= 1);
        Assert.InRange(sw.ElapsedMilliseconds, 50, 5_000);
        notifyThread.Join();

        // notifications are consumed by the wait; a pending notification is seen by TryWait
        Assert.False(listener.TryWait());
        Assert.Equal(1, notifier.Notify(3));
        Assert.True(listener.TryWait());

        // infinite wait also returns on notify
        var t = new Thread(() =>
        {
            Thread.Sleep(50);
            notifier.Notify();
        });
        t.Start();
        Assert.True(listener.Wait(Timeout.InfiniteTimeSpan));
        t.Join();
    }

    [Iceoryx2Fact]
    public void Dispose_removes_every_resource_of_the_service()
    {
        string service = TestNames.UniqueService("cleanup");
        string pubsubHash = Iceoryx2Library.GetServiceHash(service, Iceoryx2MessagingPattern.PublishSubscribe);
        string eventHash = Iceoryx2Library.GetServiceHash(service, Iceoryx2MessagingPattern.Event);
        Assert.NotEqual(pubsubHash, eventHash);
        var options = new PublishSubscribeOptions { MaxMessageSize = 256, MaxPublishers = 1, MaxSubscribers = 1, MaxNodes = 2 };

        using (var pubNode = Iceoryx2Node.Create())
        using (var subNode = Iceoryx2Node.Create())
        {
            var publisher = pubNode.CreatePublisher(service, options);
            var subscriber = subNode.CreateSubscriber(service, options);
            var notifier = pubNode.CreateNotifier(service);
            var listener = subNode.CreateListener(service);
            Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));
            publisher.SendCopy(new byte[100]);
            notifier.Notify();
            Assert.True(subscriber.TryReceive(out _)); // still held at dispose: released by Dispose

            Assert.True(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe));
            Assert.True(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.Event));
            Assert.NotEmpty(FilesContaining(pubsubHash));

            listener.Dispose();
            notifier.Dispose();
            subscriber.Dispose();
            publisher.Dispose();
        }

        Assert.False(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe));
        Assert.False(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.Event));
        Assert.Empty(FilesContaining(pubsubHash));
        Assert.Empty(FilesContaining(eventHash));
    }

    [Iceoryx2Fact]
    public void Resources_of_a_SIGKILLed_publisher_process_are_cleaned_up()
    {
        const int size = 64;
        string service = TestNames.UniqueService("sigkill");
        string hash = Iceoryx2Library.GetServiceHash(service, Iceoryx2MessagingPattern.PublishSubscribe);
        string peer = Path.Combine(AppContext.BaseDirectory, "IpcBench.Iceoryx2.TestPeer.dll");

        var node = Iceoryx2Node.Create("test-sigkill-sub");
        var subscriber = node.CreateSubscriber(service, TestPeer.Pattern.CrossProcessOptions(size));
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, UseShellExecute = false };
        foreach (var a in new[] { peer, "publish", service, "1000000000", "64" })
        {
            psi.ArgumentList.Add(a);
        }

        using var process = Process.Start(psi)!;
        try
        {
            Assert.True(subscriber.WaitForPublishers(1, TimeSpan.FromSeconds(60)));
            var sw = Stopwatch.StartNew();
            int received = 0;
            while (received < 100 && sw.Elapsed < TimeSpan.FromSeconds(30))
            {
                if (subscriber.TryReceive(out var s))
                {
                    subscriber.Release(s);
                    received++;
                }
            }

            Assert.Equal(100, received);
        }
        finally
        {
            process.Kill(); // SIGKILL: the peer cannot clean up anything
            process.WaitForExit(30_000);
        }

        // The dead publisher is still registered until somebody removes the dead node's resources.
        var deadline = Stopwatch.StartNew();
        while (subscriber.GetServiceInfo().Publishers > 0 && deadline.Elapsed < TimeSpan.FromSeconds(10))
        {
            Iceoryx2Library.CleanupDeadNodes();
            Thread.Sleep(20);
        }

        Assert.Equal(0, subscriber.GetServiceInfo().Publishers);
        subscriber.Dispose();
        node.Dispose();
        Assert.False(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe));
        Assert.Empty(FilesContaining(hash));
    }

    private static List<string> FilesContaining(string hash)
    {
        var found = new List<string>();
        foreach (var root in new[] { "/dev/shm", "/tmp/iceoryx2" })
        {
            if (!Directory.Exists(root))
            {
                continue;
            }

            foreach (var path in Directory.EnumerateFileSystemEntries(root, "*", SearchOption.AllDirectories))
            {
                if (path.Contains(hash, StringComparison.Ordinal))
                {
                    found.Add(path);
                }
            }
        }

        return found;
    }
}
