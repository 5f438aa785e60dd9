using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Tests;

/// <summary>The search's sequence of offered rates against scripted verdicts: ramp, bisection, and every way it ends.</summary>
public sealed class RateSearchStepsTests
{
    private static readonly RateSearchSpec Spec = new(TimeSpan.FromMilliseconds(1), 0.99, MaxSteps: 10);

    /// <summary>Runs the search with every rate up to <paramref name="limit"/> passing; the rates offered in order.</summary>
    private static (List<double> Offered, RateSearchOutcome Outcome) Search(double closedLoop, double limit, RateSearchSpec? spec = null)
    {
        var steps = new RateSearchSteps(spec ?? Spec);
        steps.ClosedLoop(closedLoop, string.Empty);
        var offered = new List<double>();
        while (steps.Next() is { } rate)
        {
            offered.Add(rate);
            bool passed = rate <= limit;
            steps.Record(new RateProbeRecord(rate, $"s{offered.Count}", passed, passed ? string.Empty : "latency p99 above the bound"));
        }

        return (offered, steps.Outcome());
    }

    [Fact]
    public void Ramp_x4_FromA256thOfClosedLoop_ThenBisects_UntilWithin5Percent()
    {
        var (offered, outcome) = Search(closedLoop: 256_000, limit: 30_000);

        Assert.Equal([1000, 4000, 16_000, 64_000], offered.Take(4));
        // Geometric midpoint of 16 K (pass) and 64 K (fail): 32 K, then 22.6 K ...
        Assert.Equal(32_000, offered[4]);
        Assert.Equal(22_600, offered[5]);
        Assert.True(outcome.Ended);
        Assert.InRange(outcome.SustainableRate!.Value, 30_000 / 1.05, 30_000);
        Assert.InRange(outcome.BracketHigh!.Value, 30_000, 30_000 * 1.05);
        Assert.Contains("bracketed within 5 %", outcome.Result, StringComparison.Ordinal);
        Assert.InRange(offered.Count, 6, 10);
    }

    [Fact]
    public void EverythingPasses_StopsAtTheClosedLoopRate_WithNoHighBracket()
    {
        var (offered, outcome) = Search(closedLoop: 12_345, limit: double.MaxValue);

        Assert.Equal(12_300, offered[^1]);
        Assert.Equal(5, offered.Count);
        Assert.Equal(12_300, outcome.SustainableRate);
        Assert.Null(outcome.BracketHigh);
        Assert.Contains("sustains its closed-loop rate", outcome.Result, StringComparison.Ordinal);
    }

    [Fact]
    public void TheLowestProbeFails_NoSustainableRate_SaysWhy()
    {
        var (offered, outcome) = Search(closedLoop: 1e6, limit: 0);

        Assert.Single(offered);
        Assert.True(outcome.Ended);
        Assert.Null(outcome.SustainableRate);
        Assert.Equal("no sustainable rate: the lowest probe (3,910 msg/s per publisher) failed: latency p99 above the bound", outcome.Result);
    }

    [Fact]
    public void ClosedLoopFailed_NoProbe_AndTheReason()
    {
        var steps = new RateSearchSteps(Spec);
        steps.ClosedLoop(null, "agent exited");

        Assert.Null(steps.Next());
        Assert.Equal("no sustainable rate: the closed-loop probe failed: agent exited", steps.Outcome().Result);
        Assert.Null(steps.Outcome().SustainableRate);
    }

    [Fact]
    public void MaxSteps_BoundsRampAndBisection()
    {
        var (offered, outcome) = Search(closedLoop: 1e6, limit: 333_333, Spec with { MaxSteps = 3 });

        Assert.Equal(3, offered.Count);
        Assert.Contains("max_steps (3) reached while ramping", outcome.Result, StringComparison.Ordinal);
        Assert.Equal(offered[^1], outcome.SustainableRate);

        var (bisected, bounded) = Search(closedLoop: 1e6, limit: 333_333, Spec with { MaxSteps = 6 });
        Assert.Equal(6, bisected.Count);
        Assert.Contains("max_steps (6) reached: bracketed within", bounded.Result, StringComparison.Ordinal);
        Assert.True(bounded.SustainableRate < 333_333 && bounded.BracketHigh > 333_333, bounded.ToString());
    }

    [Fact]
    public void Abandoned_KeepsWhatPassed_AndSaysTheSearchDidNotEnd()
    {
        var steps = new RateSearchSteps(Spec);
        steps.ClosedLoop(64_000, string.Empty);
        Assert.Null(steps.Outcome().SustainableRate);
        var rate = steps.Next()!.Value;
        steps.Record(new RateProbeRecord(rate, "s1", true, string.Empty));
        Assert.False(steps.Outcome().Ended);

        steps.Abandon();

        Assert.Equal(250, steps.Outcome().SustainableRate);
        Assert.StartsWith("the suite ended before the search did", steps.Outcome().Result, StringComparison.Ordinal);
    }
}
