using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Tests;

/// <summary>An agent is hung after the timeout of silence the daemon was there to hear; a stall of the daemon is not the agent's.</summary>
public sealed class HeartbeatWatchTests
{
    private const long Second = 1_000_000_000;

    [Fact]
    public void ASilentAgent_IsHung_AfterTheTimeout_OfChecksOnTime()
    {
        var watch = new HeartbeatWatch(10 * Second, Second, startNs: 0);
        long heard = 2 * Second;
        for (long now = Second; now <= 12 * Second; now += Second)
        {
            watch.Check(now);
            Assert.False(watch.IsHung(now, heard), $"{now / Second} s");
        }

        watch.Check(13 * Second);
        Assert.True(watch.IsHung(13 * Second, heard));
        Assert.Equal(11 * Second, watch.SilenceNs(13 * Second, heard));
    }

    [Fact]
    public void AStalledDaemon_DoesNotCountItsAbsence_AgainstTheAgents()
    {
        var watch = new HeartbeatWatch(10 * Second, Second, startNs: 0);
        long heard = 20 * Second;
        for (long now = Second; now <= 21 * Second; now += Second)
        {
            watch.Check(now);
        }

        // The daemon's checks stop for 9.4 s (Kestrel's heartbeat saw as much): its first check after is not a verdict.
        long resumed = 30_400_000_000;
        watch.Check(resumed);
        Assert.Equal(Second + Second, watch.SilenceNs(resumed, heard));
        Assert.False(watch.IsHung(resumed, heard));

        // An agent that stays silent once the daemon listens again is hung a timeout of listening later.
        long now2 = resumed;
        while (watch.SilenceNs(now2, heard) <= 10 * Second)
        {
            now2 += Second;
            watch.Check(now2);
        }

        Assert.Equal(resumed + 9 * Second, now2);
        Assert.True(watch.IsHung(now2, heard));
    }

    [Fact]
    public void ADaemonThatStallsOverAndOver_StillFindsAHungAgent()
    {
        var watch = new HeartbeatWatch(10 * Second, Second, startNs: 0);
        long now = 0;
        for (int check = 0; check < 20; check++)
        {
            now += 6 * Second;
            watch.Check(now);
        }

        // Each check was away 5 s of its 6: one second in six counts, and 120 s of silence are 20 s heard.
        Assert.Equal(20 * Second, watch.SilenceNs(now, heardNs: 0));
        Assert.True(watch.IsHung(now, heardNs: 0));
    }

    [Fact]
    public void ChecksLateByLessThanHalfTheTimeout_AreNotStalls()
    {
        var watch = new HeartbeatWatch(10 * Second, Second, startNs: 0);
        foreach (long at in new[] { 1, 5, 9, 12 })
        {
            watch.Check(at * Second);
        }

        Assert.Equal(5 * Second, watch.StallNs);
        Assert.Equal(11 * Second, watch.SilenceNs(12 * Second, heardNs: Second));
        Assert.True(watch.IsHung(12 * Second, heardNs: Second));
    }
}
