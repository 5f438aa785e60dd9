using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;
using IpcBench.Transports.Channels;

namespace IpcBench.Daemon.Tests;

/// <summary>When a rate-limited probe of a search passes: each reason on both sides, and what sender lag does to it.</summary>
public sealed class RateProbeVerdictTests
{
    private static readonly RateSearchSpec Search = new(TimeSpan.FromMilliseconds(10), 0.99, MaxSteps: 10);

    private static readonly ValidityNote LagDominates = new(ValidityKind.SenderLagDominates,
        "sender lag p99 1416.2 µs is over 50 % of latency p99 2095.1 µs: the tail is the publisher's lateness");

    [Fact]
    public void DeliveredInFull_WithinTheBound_Passes()
    {
        Assert.Equal(string.Empty, RateProbeVerdict.Judge(Search, Spec(rate: 255), Probe(delivered: 2_040, p99Ns: 2_095_100)));
    }

    /// <summary>
    /// At a low rate the publisher's timer lateness is most of a tiny latency: that says how to read the figure, not that
    /// the rate was not carried (uds 1 KB 2:4 at 255 msg/s per publisher, 2026-11-28, read "no sustainable rate").
    /// </summary>
    [Fact]
    public void SenderLagDominating_WithinTheBound_StillPasses()
    {
        var probe = Probe(delivered: 2_040, p99Ns: 2_095_100, LagDominates);

        Assert.Equal(string.Empty, RateProbeVerdict.Judge(Search, Spec(rate: 255), probe));
    }

    [Fact]
    public void AboveTheBound_Fails_NamingTheLagBesideIt_WhenItDominates()
    {
        var lagging = RateProbeVerdict.Judge(Search, Spec(rate: 255), Probe(delivered: 2_040, p99Ns: 12_000_000, LagDominates));
        var plain = RateProbeVerdict.Judge(Search, Spec(rate: 255), Probe(delivered: 2_040, p99Ns: 12_000_000));

        Assert.StartsWith("latency p99 12 ms above the bound 10 ms (sender lag dominates: sender lag p99 1416.2 µs", lagging, StringComparison.Ordinal);
        Assert.Equal("latency p99 12 ms above the bound 10 ms", plain);
    }

    [Fact]
    public void ReceiversBehind_Fails_EvenWithinTheBound()
    {
        var behind = new ValidityNote(ValidityKind.ReceiversBehind, "the backlog grew by 9,000 messages");

        Assert.Equal(behind.Text, RateProbeVerdict.Judge(Search, Spec(rate: 255), Probe(delivered: 2_040, p99Ns: 2_000_000, behind)));
    }

    [Theory]
    [InlineData(2_019, false)] // 98.97 % of 2 publishers x 4 subscribers x 255
    [InlineData(2_020, true)] // 99.0 %
    public void DeliveredShare_AtLeastTheSearchsRatio(double delivered, bool passes)
    {
        string reason = RateProbeVerdict.Judge(Search, Spec(rate: 255), Probe(delivered, p99Ns: 2_000_000));

        Assert.Equal(passes, reason.Length == 0);
        if (!passes)
        {
            Assert.Contains("of the offered 2,040 (at least 99.0% needed)", reason.Replace(" %", "%", StringComparison.Ordinal), StringComparison.Ordinal);
        }
    }

    [Fact]
    public void AFailedProbe_FailsWithItsError()
    {
        var failed = Probe(2_040, 2_000_000) with { State = RunState.Failed, Error = "agent 1 exited with code 137" };

        Assert.Equal("the scenario failed: agent 1 exited with code 137", RateProbeVerdict.Judge(Search, Spec(rate: 255), failed));
    }

    private static ResolvedSpec Spec(double rate) => new(
        new ChannelsTransport(), 2, 4, 1024, TimeSpan.FromSeconds(2), TimeSpan.FromMilliseconds(500), rate, RunTopology.AllToAll,
        RunPayloadAccess.Full, RunMode.Stream, WaitMode.Block, "probe", LatencySampleEvery: 1);

    private static ScenarioSnapshot Probe(double delivered, long p99Ns, params ValidityNote[] notes) => new(
        "probe", null, RunState.Completed, string.Empty, DateTime.UnixEpoch, DateTime.UnixEpoch, DateTime.UnixEpoch,
        new RunStats(0, 0, 0, 0, 0, 0, delivered, delivered * 1024, (long)(delivered * 2), TimeSpan.FromSeconds(2),
            new LatencySummary(RunLatencyKind.OneWay, 4_000, 10_000, 50_000, 100_000, p99Ns, p99Ns, p99Ns, 60_000), [])
        {
            Validity = notes,
        },
        null, null, string.Empty);
}
