using IpcBench.Daemon.Control;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A validity flag costs a repetition only where it could explain the difference (<see cref="FlagBounds"/>): issue 34's
/// three suites of shm-ring and iceoryx2 at 64 B SPIN, 5 repetitions, pinned 0/1 and 0/0, as synthetic repetitions.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class FlagVerdictTests
{
    private static readonly ValidityIssue Moved = new(FlagBounds.PlacementMoved, "probes: 95 ns before the run (near) and 420 ns after it (far; ...)");
    private static readonly ValidityIssue Noisy = new(FlagBounds.NoiseAboveLimit, "other processes used 7.0 % of the machine while measuring, above the default limit of 5 %");
    private static readonly ValidityIssue Shortfall = new("rate_shortfall", "delivered 95,012 msg/s");

    private static readonly CellKey ShmRing = new("shm-ring", 64, Wait: CellWait.Spin);
    private static readonly CellKey Iceoryx2 = new("iceoryx2", 64, Wait: CellWait.Spin);

    /// <summary>Issue 34's baseline: rounds 1 (noise, placement), 2, 4 (placement) and 5 (noise) flagged.</summary>
    private static IReadOnlyList<ValidityIssue>? Issue34Flags(int round) => round switch
    {
        1 => [Noisy, Moved],
        2 or 4 => [Moved],
        5 => [Noisy],
        _ => null,
    };

    [Fact]
    public void PinnedApartAgainstOneCpu_IsRegressedForBothTransports_TheFlagsNamedBeside()
    {
        var baseline = Suite("pinned-0-1", seed: 1, msgPerSecond: 9e6, probeNs: 95, Issue34Flags);
        // Publisher and subscriber on one CPU: −98 % msg/s, and no pair of cores to probe.
        var candidate = Suite("pinned-0-0", seed: 2, msgPerSecond: 0.18e6, probeNs: null, _ => null);

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        Assert.Equal(Verdict.Regressed, comparison.Verdict);
        Assert.All(comparison.Cells, cell =>
        {
            Assert.Equal(Verdict.Regressed, cell.Verdict);
            var rate = cell.MessagesPerSecond!;
            Assert.Equal(Verdict.Regressed, rate.Verdict);
            Assert.Equal((5, 5), (rate.BaselineSamples, rate.CandidateSamples));
            Assert.Contains("with flagged repetitions (baseline round 1 (noise above limit, placement moved); baseline round 2 (placement moved); " +
                "baseline round 4 (placement moved); baseline round 5 (noise above limit)): the shift's interval lies beyond the", rate.Note, StringComparison.Ordinal);
            // Noise moves a tail without bound: the latency tests leave the noisy rounds out, and the cell says what that cost.
            Assert.Contains(new FlagCost(FlagBounds.NoiseAboveLimit, 2, 0), cell.FlagCosts);
            Assert.Contains(cell.Notes, n => n.StartsWith("repetitions the validity flags cost", StringComparison.Ordinal) && n.Contains("noise above limit: 2 + 0 repetitions", StringComparison.Ordinal));
        });
    }

    [Fact]
    public void PinnedApartAgainstItself_IsNeverRegressedOrImproved_WhateverTheFlags()
    {
        for (int seed = 0; seed < 200; seed++)
        {
            var rng = new Random(seed);
            IReadOnlyList<ValidityIssue>? RandomFlags(int round) => rng.Next(4) switch
            {
                0 => [Moved],
                1 => [Noisy],
                2 => [Noisy, Moved],
                _ => null,
            };
            var baseline = Suite("a", seed: 2 * seed, msgPerSecond: 9e6, probeNs: 95, RandomFlags);
            var candidate = Suite("b", seed: 2 * seed + 1, msgPerSecond: 9e6, probeNs: 95, RandomFlags);

            var comparison = SuiteComparison.Compare(baseline, candidate, 5);

            Assert.All(comparison.Cells.SelectMany(c => c.Metrics), m => Assert.True(m.Verdict is Verdict.Same or Verdict.Inconclusive, $"seed {seed}: {m.Metric} {m.Verdict} {m.Note}"));
        }
    }

    [Fact]
    public void PinnedApartAgainstItself_WithoutFlags_IsSame()
    {
        var comparison = SuiteComparison.Compare(Suite("a", 3, 9e6, 95, _ => null), Suite("b", 4, 9e6, 95, _ => null), 5);

        Assert.Equal(Verdict.Same, comparison.Verdict);
        Assert.All(comparison.Cells, c => Assert.Empty(c.FlagCosts));
    }

    [Fact]
    public void AShiftAPlacementMoveCouldExplain_CostsTheFlaggedRepetitions()
    {
        // 3x slower: within the 10x a placement move can do, so rounds 2 to 4 leave every test, and 2 against 5 can tell nothing.
        var baseline = Suite("base", 5, 9e6, 95, r => r is 2 or 3 or 4 ? [Moved] : null);
        var candidate = Suite("slow", 6, 3e6, 95, _ => null);

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        var cell = comparison.Cells[0];
        Assert.Equal(Verdict.Inconclusive, cell.Verdict);
        Assert.Equal((2, 5), (cell.MessagesPerSecond!.BaselineSamples, cell.MessagesPerSecond.CandidateSamples));
        Assert.Contains("without flagged repetitions (baseline round 2 (placement moved); baseline round 3 (placement moved); baseline round 4 (placement moved)): " +
            "their flags could explain a shift of this size", cell.MessagesPerSecond.Note, StringComparison.Ordinal);
        Assert.Equal([new FlagCost(FlagBounds.PlacementMoved, 3, 0)], cell.FlagCosts);
    }

    [Fact]
    public void AFlagWithoutBound_AlwaysCostsItsRepetition_AndTheRestStillGiveAVerdict()
    {
        // A rate shortfall measured something else: out, whatever the shift; 5 against 4 valid ones still decide.
        var baseline = Suite("base", 7, 9e6, 95, _ => null);
        var candidate = Suite("short", 8, 0.18e6, 95, r => r == 3 ? [Shortfall] : null);

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        var cell = comparison.Cells[0];
        Assert.Equal(Verdict.Regressed, cell.Verdict);
        Assert.Equal((5, 4), (cell.MessagesPerSecond!.BaselineSamples, cell.MessagesPerSecond.CandidateSamples));
        Assert.Equal([new FlagCost("rate_shortfall", 0, 1)], cell.FlagCosts);
    }

    [Fact]
    public void NoiseOfUnknownSize_BoundsNothing()
    {
        var baseline = Suite("base", 9, 9e6, 95, r => r <= 3 ? [Noisy] : null, noisePercent: null);
        var candidate = Suite("cand", 10, 0.18e6, 95, _ => null);

        var cell = SuiteComparison.Compare(baseline, candidate, 5).Cells[0];

        Assert.Equal(Verdict.Inconclusive, cell.MessagesPerSecond!.Verdict);
        Assert.Equal([new FlagCost(FlagBounds.NoiseAboveLimit, 3, 0)], cell.FlagCosts);
    }

    [Theory]
    [InlineData(-95, -90.1, 10, true)] // all of it below a tenth
    [InlineData(-95, -89.9, 10, false)]
    [InlineData(900, 1200, 10, true)]
    [InlineData(899, 1200, 10, false)]
    [InlineData(-20, -10, 1.19, false)]
    [InlineData(-30, -17, 1.19, true)]
    public void Beyond_TheWholeIntervalPastTheFactor(double low, double high, double factor, bool beyond)
    {
        Assert.Equal(beyond, FlagBounds.Beyond(low, high, factor));
    }

    [Fact]
    public void NoiseBound_IsTheShareOfOneThreadTheNoiseCanTake()
    {
        var repetition = Repetition(new Random(1), 1, 9e6, 95, [Noisy], noisePercent: 8);

        // 8 % of 2 CPUs is 16 % of one thread: figures at most 1 / 0.84 apart.
        Assert.Equal(1 / 0.84, FlagBounds.Factor(repetition, "messages_per_second", 2)!.Value, 9);
        Assert.Null(FlagBounds.Factor(repetition, "latency_p99", 2));
        Assert.Equal(10 / 0.84, FlagBounds.Factor(repetition with { Validity = [Noisy, Moved] }, "messages_per_second", 2)!.Value, 9);
        Assert.Null(FlagBounds.Factor(repetition with { NoisePercent = 50 }, "messages_per_second", 2));
    }

    [Fact]
    public void FlagCosts_ReachTheRpc()
    {
        var baseline = Suite("base", 5, 9e6, 95, r => r is 2 or 4 ? [Moved] : null);
        var candidate = Suite("slow", 6, 3e6, 95, _ => null);

        var response = SuiteComparer.Compare(baseline, candidate, 5);

        var cost = Assert.Single(response.Cells[0].FlagCosts);
        Assert.Equal((V1.ValidityKind.PlacementMoved, 2, 0), (cost.Kind, cost.BaselineRepetitions, cost.CandidateRepetitions));
    }

    private static SuiteReport Suite(string id, int seed, double msgPerSecond, double? probeNs, Func<int, IReadOnlyList<ValidityIssue>?> flags, double? noisePercent = 7)
    {
        var rng = new Random(seed);
        var cells = new[] { ShmRing, Iceoryx2 }.Select(key => new ReportCell(key, TimeSpan.FromSeconds(1), TimeSpan.FromMilliseconds(300),
            [.. Enumerable.Range(1, 5).Select(round => Repetition(rng, round, msgPerSecond, probeNs, flags(round), noisePercent))], [])).ToList();
        return new SuiteReport(id, id, "COMPLETED", new DateTimeOffset(2026, 11, 27, 9, 0, 0, TimeSpan.Zero), null, 5, ReportSamples.Environment, cells);
    }

    /// <summary>One repetition: msg/s within ±4 % of the level, latency the inverse of it (a spinning 1:1 stream).</summary>
    private static RepetitionResult Repetition(Random rng, int round, double msgPerSecond, double? probeNs, IReadOnlyList<ValidityIssue>? flags, double? noisePercent)
    {
        double rate = msgPerSecond * (0.96 + 0.08 * rng.NextDouble());
        double p50 = 1e9 / rate * (0.96 + 0.08 * rng.NextDouble());
        return new RepetitionResult(round, $"s-{round}-{rng.Next()}", null, rate, rate * 64, 100, 100,
            new LatencyPercentiles(1000, p50, p50 * 1.5, p50 * 3, p50 * 10, p50 * 20, p50 * 50), [],
            probeNs, flags, NoisePercent: flags is null ? 0.5 : noisePercent);
    }
}
