using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Tests;

/// <summary>When a scenario's processes count as done compiling: each spent at most 2 % of a core on the JIT over its last second.</summary>
public sealed class CodeSettlingTests
{
    private const long Ms = 1_000_000;

    private static TimeSpan Jit(double milliseconds) => TimeSpan.FromMilliseconds(milliseconds);

    [Fact]
    public void AProcessIsJudgedOverItsLastSecond_AtMostTwoPercentOfACore()
    {
        var settling = new CodeSettling();
        settling.Observe("daemon", Jit(400), 0);
        settling.Observe("daemon", Jit(410), 500 * Ms);
        Assert.False(settling.Settled(["daemon"])); // less than a second read

        settling.Observe("daemon", Jit(419), 1_000 * Ms);
        Assert.Equal(0.019, settling.JitShare("daemon")!.Value, precision: 6);
        Assert.True(settling.Settled(["daemon"]));

        // A burst of tier-ups: 30 ms over the last second.
        settling.Observe("daemon", Jit(449), 1_500 * Ms);
        Assert.False(settling.Settled(["daemon"]));
        settling.Observe("daemon", Jit(449), 2_000 * Ms);
        Assert.False(settling.Settled(["daemon"])); // 1.0 s to 2.0 s: still 30 ms
        settling.Observe("daemon", Jit(450), 2_500 * Ms);
        Assert.True(settling.Settled(["daemon"])); // 1.5 s to 2.5 s: 1 ms
    }

    [Fact]
    public void EveryProcessMustHaveSettled_AndOneNotReadForASecond_HasNot()
    {
        var settling = new CodeSettling();
        foreach (long t in (long[])[0, 600, 1_100])
        {
            settling.Observe("daemon", Jit(100), t * Ms);
            settling.Observe("agent 0", Jit(50 + t / 100.0), t * Ms);
        }

        Assert.True(settling.Settled(["daemon", "agent 0"]));
        Assert.False(settling.Settled(["daemon", "agent 0", "agent 1"])); // no report from it yet
        settling.Observe("agent 1", Jit(70), 1_100 * Ms);
        Assert.False(settling.Settled(["daemon", "agent 0", "agent 1"]));
        settling.Observe("agent 1", Jit(75), 2_100 * Ms);
        Assert.True(settling.Settled(["daemon", "agent 0", "agent 1"]));
    }

    [Fact]
    public void TheSameReportReadAgain_AddsNoTime()
    {
        // An agent's latest report is read at every poll with the time it arrived, not the time it was read.
        var settling = new CodeSettling();
        settling.Observe("agent 0", Jit(50), 100 * Ms);
        settling.Observe("agent 0", Jit(50), 100 * Ms);
        settling.Observe("agent 0", Jit(50), 100 * Ms);
        Assert.Null(settling.JitShare("agent 0"));
        Assert.False(settling.Settled(["agent 0"]));
    }
}
