using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>Median and min–max per cell over its repetitions, failed runs left out, and the 10 % spread flag.</summary>
public sealed class RepetitionStatsTests
{
    private static RepetitionResult Run(int round, double rate, double p50 = 1000, string? error = null) =>
        new(round, $"s{round}", error, rate, rate * 8, 50 + round, 90 + round, new LatencyPercentiles(100, p50, p50 * 2, p50 * 3, p50 * 4, p50 * 5, p50 * 6), []);

    [Fact]
    public void OddCount_MedianIsTheMiddleRun()
    {
        var s = RepetitionStats.Summarize([Run(1, 300), Run(2, 100), Run(3, 200)]);

        Assert.Equal(new Spread(200, 100, 300), s.MessagesPerSecond);
        Assert.Equal(new Spread(1600, 800, 2400), s.BytesPerSecond);
        Assert.Equal(new Spread(52, 51, 53), s.DaemonCpuPercent);
        Assert.Equal(new Spread(92, 91, 93), s.AgentsCpuPercent);
        Assert.Equal(3, s.Repetitions);
    }

    [Fact]
    public void EvenCount_MedianIsTheMeanOfTheMiddleTwo()
    {
        var s = RepetitionStats.Summarize([Run(1, 100, p50: 10), Run(2, 400, p50: 40), Run(3, 200, p50: 20), Run(4, 300, p50: 30)]);

        Assert.Equal(250, s.MessagesPerSecond.Median);
        Assert.Equal(new Spread(25, 10, 40), s.LatencyP50);
        Assert.Equal(new Spread(125, 50, 200), s.LatencyP9999);
        Assert.Equal(new Spread(150, 60, 240), s.LatencyMax);
    }

    [Fact]
    public void FailedRuns_AreCounted_ButAddNothing()
    {
        var s = RepetitionStats.Summarize([Run(1, 100), Run(2, 0, error: "agent died"), Run(3, 110)]);

        Assert.Equal(2, s.Repetitions);
        Assert.Equal(1, s.Failed);
        Assert.Equal(new Spread(105, 100, 110), s.MessagesPerSecond);
    }

    [Fact]
    public void NoSuccessfulRun_IsAllZero_AndNotFlagged()
    {
        var s = RepetitionStats.Summarize([Run(1, 0, error: "x")]);

        Assert.Equal(0, s.Repetitions);
        Assert.Equal(Spread.None, s.MessagesPerSecond);
        Assert.False(s.SpreadExceeded);
    }

    [Theory]
    [InlineData(95, 105, false)]   // (105 - 95) / 100 = exactly 10 %: within
    [InlineData(94, 105, true)]    // 11 %
    [InlineData(100, 100, false)]
    public void Spread_AboveTenPercentOfTheMedian_IsFlagged(double low, double high, bool flagged)
    {
        var s = RepetitionStats.Summarize([Run(1, low), Run(2, 100), Run(3, high)]);

        Assert.Equal((high - low), s.SpreadPercent, 9);
        Assert.Equal(flagged, s.SpreadExceeded);
    }

    [Fact]
    public void SingleRun_IsNeverFlagged()
    {
        Assert.False(RepetitionStats.Summarize([Run(1, 100)]).SpreadExceeded);
    }

    [Fact]
    public void CpuPerMessage_IsCpuTimeOverDeliveredMessages()
    {
        var s = RepetitionStats.Summarize([Run(1, 1_000_000)]);

        // 51 % of a core over 1 M msg/s = 0.51 s / 1e6 = 510 ns per message.
        Assert.Equal(510, s.CpuNanosecondsPerMessage(s.DaemonCpuPercent.Median), 6);
    }
}
