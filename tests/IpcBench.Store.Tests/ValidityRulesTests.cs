using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Schema;
using IpcBench.Transports;
using IpcBench.Transports.Channels;

namespace IpcBench.Daemon.Tests;

/// <summary>When a result stops measuring what its spec asked for: each rule on both sides of its bound.</summary>
public sealed class ValidityRulesTests
{
    [Theory]
    [InlineData(9_850, true)] // 98.5 % of 2 publishers x 2 subscribers x 2500
    [InlineData(9_910, false)] // 99.1 %
    public void RateShortfall_BelowNinetyNinePercentOfTheOfferedDeliveries(double delivered, bool flagged)
    {
        var spec = Spec(publishers: 2, subscribers: 2, rate: 2500);
        var notes = ValidityRules.Check(spec, Stats(delivered), backlogGrowth: null);
        Assert.Equal(flagged, notes.Any(n => n.Kind == ValidityKind.RateShortfall));
        if (flagged)
        {
            Assert.Contains("of the offered 10,000 msg/s", notes.Single().Detail, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void ClosedLoop_HasNoOfferedRateToFallShortOf()
    {
        Assert.Empty(ValidityRules.Check(Spec(rate: 0), Stats(1), backlogGrowth: null));
    }

    [Theory]
    [InlineData(null, false)] // too few ticks to fit a line
    [InlineData(150_000.0, false)] // 1.5 s of deliveries: one stale agent report's step
    [InlineData(250_000.0, true)] // 2.5 s of deliveries and 2.5 % of the window's
    public void ReceiversBehind_WhenTheBacklogGrowsBeyondTwoSecondsOfDeliveries(double? growth, bool flagged)
    {
        var notes = ValidityRules.Check(Spec(), Stats(100_000, measuredSeconds: 100), growth);
        Assert.Equal(flagged, notes.Any(n => n.Kind == ValidityKind.ReceiversBehind));
    }

    [Fact]
    public void ReceiversBehind_NeedsOnePercentOfTheWindowToo()
    {
        // A day's soak: 3 s of deliveries is far below 1 % of the window's.
        Assert.Empty(ValidityRules.Check(Spec(), Stats(100_000, measuredSeconds: 86_400), backlogGrowth: 300_000));
    }

    [Fact]
    public void SenderLagDominating_IsNamedWithBothFigures()
    {
        var stats = Stats(10_000) with { SenderLag = new SenderLagSummary(1000, 2_000, 60_000, 90_000, Dominates: true) };
        var note = Assert.Single(ValidityRules.Check(Spec(rate: 10_000), stats, backlogGrowth: null));
        Assert.Equal(ValidityKind.SenderLagDominates, note.Kind);
        Assert.Contains("sender lag p99 60 µs", note.Detail, StringComparison.Ordinal);
        Assert.Contains("latency p99 100 µs", note.Detail, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(null, 4.9, false)]
    [InlineData(null, 5.1, true)] // the default limit
    [InlineData(20.0, 15.0, false)] // the spec's max_noise_percent replaces it
    [InlineData(20.0, 21.0, true)]
    public void Noise_AboveTheSpecsLimit_OrTheDefault(double? maxNoise, double noise, bool flagged)
    {
        var spec = Spec() with { Placement = ScenarioPlacement.None with { MaxNoisePercent = maxNoise } };
        var notes = ValidityRules.Check(spec, Stats(100_000) with { NoisePercent = noise }, backlogGrowth: null);
        Assert.Equal(flagged, notes.Any(n => n.Kind == ValidityKind.NoiseAboveLimit));
    }

    [Fact]
    public void Noise_NamesTheHypervisorsStealApart()
    {
        var note = Assert.Single(ValidityRules.Check(Spec(), Stats(100_000) with { NoisePercent = 7.2, StealPercent = 5.1 }, backlogGrowth: null));
        Assert.Equal("other processes used 7.2 % of the machine while measuring (5.1 % of it hypervisor steal), above the default limit of 5 %", note.Detail);
    }

    [Theory]
    [InlineData(91L, 421L, true)] // near before, far after: measured in this session's A/B
    [InlineData(421L, 91L, true)]
    [InlineData(100L, 199L, false)] // before the classes are learned: the 2x rule
    [InlineData(100L, 200L, true)]
    [InlineData(100L, null, false)] // the probe after could not run
    [InlineData(null, 400L, false)]
    public void PlacementMoved_BeforeAnythingIsLearned_WhenTheProbesAreTwiceApart(long? before, long? after, bool flagged)
    {
        var notes = ValidityRules.Check(Spec(), Stats(100_000), backlogGrowth: null, new PlacementEvidence(before, after, PlacementClasses.NotLearned, []));
        Assert.Equal(flagged, notes.Any(n => n.Kind == ValidityKind.PlacementMoved));
        if (flagged)
        {
            Assert.Contains($"probes: {before} ns before the run and {after} ns after it", notes.Single().Detail, StringComparison.Ordinal);
            Assert.Contains("not learned yet", notes.Single().Detail, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void Validity_SurvivesTheProtoAndTheStore()
    {
        var stats = Stats(10) with { Validity = [new(ValidityKind.RateShortfall, "a"), new(ValidityKind.NoiseAboveLimit, "b")] };
        var back = ScenarioProtos.FromProto(ScenarioProtos.ToProto(stats));
        Assert.Equal(stats.Validity, back.Validity);
        Assert.Equal(["VALIDITY_KIND_RATE_SHORTFALL", "VALIDITY_KIND_NOISE_ABOVE_LIMIT"],
            ScenarioProtos.ToProto(stats).Validity.Select(v => V1.ControlReflection.Descriptor.FindTypeByName<Google.Protobuf.Reflection.EnumDescriptor>("ValidityKind").FindValueByNumber((int)v.Kind).Name));
    }

    [Fact]
    public void BacklogTrend_FitsTheGrowth_AndOneStaleReportMovesItLittle()
    {
        var growing = new BacklogTrend();
        var steady = new BacklogTrend();
        for (int t = 0; t <= 10; t++)
        {
            growing.Add(1000 + t, 5_000 + 2_000 * t);
            // A steady 1000 in flight, but the last tick saw an agent report a whole second old (100,000 more).
            steady.Add(1000 + t, t == 10 ? 101_000 : 1_000);
        }

        Assert.Equal(20_000, growing.Growth!.Value, precision: 6);
        Assert.InRange(steady.Growth!.Value, 0, 50_000);
        var few = new BacklogTrend();
        for (int t = 0; t < BacklogTrend.MinimumTicks - 1; t++)
        {
            few.Add(t, t * 1e6);
        }

        Assert.Null(few.Growth);
    }

    private static ResolvedSpec Spec(int publishers = 1, int subscribers = 1, double rate = 0) => new(
        new ChannelsTransport(), publishers, subscribers, 8, TimeSpan.FromSeconds(10), TimeSpan.Zero, rate, RunTopology.AllToAll,
        RunPayloadAccess.Full, RunMode.Stream, WaitMode.Spin, "validity", LatencySampleEvery: 1);

    private static RunStats Stats(double messagesPerSecond, double measuredSeconds = 10) => new(
        0, 0, 0, 0, 0, 0, messagesPerSecond, messagesPerSecond * 8, (long)(messagesPerSecond * measuredSeconds), TimeSpan.FromSeconds(measuredSeconds),
        new LatencySummary(RunLatencyKind.OneWay, 1000, 100, 1_000, 2_000, 100_000, 200_000, 300_000, 1_500), []);
}
