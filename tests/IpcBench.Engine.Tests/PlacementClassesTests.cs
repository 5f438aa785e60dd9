using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The placement classes a daemon learns from its probe history, and `placement moved` resting on them or on a step in
/// the series: synthetic histories shaped like issue 34's host (near ~50–170 ns, middle ~200–350, far ~400–1000).
/// </summary>
public sealed class PlacementClassesTests
{
    /// <summary>A host of three placements, each probe spread log-uniformly within its placement's range.</summary>
    private static List<double> ThreePlacements(int each = 30) =>
    [
        .. Spread(50, 170, each), .. Spread(200, 350, each), .. Spread(400, 1000, each),
    ];

    private static IEnumerable<double> Spread(double low, double high, int count) =>
        Enumerable.Range(0, count).Select(i => low * Math.Pow(high / low, i / (double)(count - 1)));

    [Fact]
    public void Learn_FindsTheHostsThreePlacements_AndSaysWhereTheyEnd()
    {
        var classes = PlacementClasses.Learn(ThreePlacements());

        Assert.Equal(["near", "middle", "far"], classes.Classes.Select(c => c.Name));
        Assert.Equal((50, 170), (Math.Round(classes.Classes[0].MinNs), Math.Round(classes.Classes[0].MaxNs)));
        Assert.Equal((400, 1000), (Math.Round(classes.Classes[2].MinNs), Math.Round(classes.Classes[2].MaxNs)));
        Assert.Equal("near ≤ 170 ns, middle 200–350 ns, far ≥ 400 ns, learned from 90 probes", classes.Describe());
        // 51 and 173 ns: one placement's spread; 173 and 200: two placements.
        Assert.Equal(classes.IndexOf(51), classes.IndexOf(170));
        Assert.NotEqual(classes.IndexOf(170), classes.IndexOf(210));
        Assert.Equal("far", classes.NameOf(5000));
    }

    [Fact]
    public void Learn_OneHeap_IsOneClass_HoweverWideItsOwnSpread()
    {
        // Log-normal-like: dense in the middle, thin at the edges, 3.4x from end to end.
        var rng = new Random(34);
        var heap = Enumerable.Range(0, 200).Select(_ => 95 * Math.Exp(0.25 * Gaussian(rng))).ToList();

        var classes = PlacementClasses.Learn(heap);

        Assert.True(classes.Learned);
        var only = Assert.Single(classes.Classes);
        Assert.Equal("all", only.Name);
        Assert.StartsWith("one placement class", classes.Describe(), StringComparison.Ordinal);
    }

    [Fact]
    public void Learn_TwoPlacements_AreNearAndFar_AndAFewOutliersAreNoClass()
    {
        var probes = Spread(60, 150, 40).Concat(Spread(420, 650, 40)).Append(2_400).ToList();

        var classes = PlacementClasses.Learn(probes);

        Assert.Equal(["near", "far"], classes.Classes.Select(c => c.Name));
        Assert.Equal(2_400, classes.Classes[1].MaxNs);
        Assert.Equal("near ≤ 150 ns, far ≥ 420 ns, learned from 81 probes", classes.Describe());
    }

    [Fact]
    public void Learn_TooFewProbes_LearnsNothing()
    {
        var classes = PlacementClasses.Learn(ThreePlacements(each: 7).Take(PlacementClasses.MinimumProbes - 1));

        Assert.False(classes.Learned);
        Assert.Null(classes.IndexOf(100));
        Assert.Equal($"placement classes not learned yet ({PlacementClasses.MinimumProbes - 1} of {PlacementClasses.MinimumProbes} probes)", classes.Describe());
    }

    [Theory]
    // Issue 34's nine flagged results: probe before → after (ns).
    [InlineData(173, 69, false)] // near both: the probe's own spread
    [InlineData(350, 77, true)] // middle → near
    [InlineData(214, 79, true)]
    [InlineData(226, 66, true)]
    [InlineData(127, 337, true)] // near → middle
    [InlineData(188, 413, true)] // 188 sits in the valley between near (≤ 170) and middle (≥ 200), past its bottom
    [InlineData(953, 80, true)]
    [InlineData(99, 407, true)]
    [InlineData(1009, 73, true)]
    [InlineData(51, 160, false)]
    [InlineData(420, 990, false)]
    public void PlacementMoved_OnlyWhenTheProbesFallInDifferentLearnedClasses(long before, long after, bool flagged)
    {
        var evidence = new PlacementEvidence(before, after, PlacementClasses.Learn(ThreePlacements()), [1e6, 1e6, 1.02e6, 0.98e6, 1e6]);

        var note = PlacementMoveRule.Check(evidence);

        Assert.Equal(flagged, note is not null);
        if (note is not null)
        {
            Assert.Equal(ValidityKind.PlacementMoved, note.Kind);
            Assert.StartsWith($"probes: {before} ns before the run (", note.Detail, StringComparison.Ordinal);
            Assert.Contains("learned from 90 probes", note.Detail, StringComparison.Ordinal);
            Assert.DoesNotContain("series step", note.Detail, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void NoResultIsFlagged_WhoseProbesFallInOneLearnedClass_WithNoStepInItsSeries()
    {
        var classes = PlacementClasses.Learn(ThreePlacements());
        var rng = new Random(7);
        var probes = ThreePlacements().ToArray();
        for (int i = 0; i < 2_000; i++)
        {
            double before = probes[rng.Next(probes.Length)];
            double after = probes[rng.Next(probes.Length)];
            // A series wandering ±20 % around one level: noise, GC pauses, no step.
            var series = Enumerable.Range(0, 2 + rng.Next(10)).Select(_ => 1e6 * (0.8 + 0.4 * rng.NextDouble())).ToArray();
            var note = PlacementMoveRule.Check(new PlacementEvidence((long)before, (long)after, classes, series));
            bool sameClass = classes.IndexOf((long)before) == classes.IndexOf((long)after);
            Assert.Equal(!sameClass, note is not null);
        }
    }

    [Fact]
    public void PlacementMoved_ByASeriesStep_WhenTheProbesSayNothing()
    {
        var classes = PlacementClasses.Learn(ThreePlacements());
        // The subscriber moved onto the publisher's CPU at second 3: both spin, each gets half the slices.
        double[] series = [9.1e6, 9.3e6, 9.2e6, 0.18e6, 0.2e6, 0.19e6];

        var note = PlacementMoveRule.Check(new PlacementEvidence(95, 101, classes, series));

        Assert.NotNull(note);
        Assert.StartsWith("series step: msg/s went from 9,200,000 to 190,000 at second 3", note.Detail, StringComparison.Ordinal);
        Assert.Contains("probes 95 → 101 ns", note.Detail, StringComparison.Ordinal);
        Assert.DoesNotContain("probes: ", note.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public void PlacementMoved_ByBoth_SaysBoth()
    {
        var note = PlacementMoveRule.Check(new PlacementEvidence(95, 600, PlacementClasses.Learn(ThreePlacements()), [4e6, 4.1e6, 1.2e6, 1.1e6]));

        Assert.NotNull(note);
        Assert.StartsWith("probes: 95 ns before the run (near) and 600 ns after it (far;", note.Detail, StringComparison.Ordinal);
        Assert.Contains("; and series step: msg/s went from 4,050,000 to 1,150,000 at second 2", note.Detail, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(new[] { 1e6, 1e6, 1.4e6, 1.4e6 }, null)] // 1.4x: below the step's ratio
    [InlineData(new[] { 1e6, 1e6, 1.5e6, 1.5e6 }, 2)]
    [InlineData(new[] { 1e6, 0.3e6, 1e6, 1e6 }, null)] // one odd second is not a step
    [InlineData(new[] { 1e6, 1e6, 0.3e6 }, null)] // nor is an odd last second
    [InlineData(new[] { 1e6, 0.6e6, 1e6, 0.6e6, 1e6 }, null)] // overlapping sides
    [InlineData(new[] { 3e6, 3.1e6, 2.9e6, 1e6, 1.1e6 }, 3)]
    [InlineData(new[] { 1e6, 1.1e6, 0e6, 0e6 }, 2)] // stalled: from something to nothing
    public void SeriesStep_TwoSecondsAtLeastEachSide_NoOverlap_OnePointFiveApart(double[] series, int? at)
    {
        Assert.Equal(at, SeriesStep.Find(series)?.AtSecond);
    }

    private static double Gaussian(Random rng) =>
        Math.Sqrt(-2 * Math.Log(1 - rng.NextDouble())) * Math.Cos(2 * Math.PI * rng.NextDouble());
}
