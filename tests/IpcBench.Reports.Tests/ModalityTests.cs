using IpcBench.Reports;
using Perfolizer.Mathematics.Multimodality;

namespace IpcBench.Reports.Tests;

/// <summary>
/// The modality rule (Reports/Modality): groups of repetitions split at the widest gap when Pragmastat's disparity
/// says they stand apart, too few values to tell below five, and modes named by the placement classes they ran in.
/// </summary>
public sealed class ModalityTests
{
    private static readonly double[] Bimodal = [1.0e6, 1.05e6, 0.98e6, 3.1e6, 3.0e6, 2.9e6];

    [Fact]
    public void TwoTightGroups3xApart_AreBimodal_WithTheirMediansAndCounts()
    {
        var modality = Of(Bimodal);

        Assert.Equal(ModalityKind.Multimodal, modality.Kind);
        Assert.Equal(2, modality.ModeCount);
        Assert.Equal([1.0e6, 3.0e6], modality.Modes.Select(m => m.Location));
        Assert.Equal([(0.98e6, 1.05e6, 3), (2.9e6, 3.1e6, 3)], modality.Modes.Select(m => (m.Min, m.Max, m.Count)));
        Assert.Equal("bimodal: 1.00 M (×3), 3.00 M (×3)", modality.Text);
        Assert.False(modality.ByPlacement);
        Assert.Equal([1, 1, 1, 2, 2, 2], Bimodal.Select(v => modality.ModeOf(v)!.Value));
    }

    [Fact]
    public void FiveValuesWithinThreePercent_AreUnimodal()
    {
        var modality = Of([1.0e6, 1.03e6, 0.97e6, 1.02e6, 0.99e6]);

        Assert.Equal(ModalityKind.Unimodal, modality.Kind);
        Assert.Equal(1, modality.ModeCount);
        Assert.Equal("unimodal", modality.Text);
        Assert.Equal(1, modality.ModeOf(1.03e6));
    }

    [Fact]
    public void FourValues_AreTooFewToTell_EvenWhenTheyLookBimodal()
    {
        var modality = Of([1.0e6, 1.02e6, 3.0e6, 3.1e6]);

        Assert.Equal(ModalityKind.TooFew, modality.Kind);
        Assert.Equal(0, modality.ModeCount);
        Assert.Empty(modality.Modes);
        Assert.Equal("too few repetitions to tell (4; 5 needed)", modality.Text);
        Assert.Null(modality.ModeOf(1.0e6));
    }

    [Fact]
    public void ModesThatAreThePlacements_AreSaidToBe()
    {
        // Near (a shared cache) 3x faster than far: the second mode is where the vCPUs sat, not the transport.
        var modality = Modality.Of(Bimodal, ["far", "far", "far", "near", "near", "near"], ReportFormatting.Count);

        Assert.True(modality.ByPlacement);
        Assert.Equal("bimodal by placement: 1.00 M (far ×3), 3.00 M (near ×3)", modality.Text);
        Assert.Equal([[new PlacementCount("far", 3)], [new PlacementCount("near", 3)]], modality.Modes.Select(m => m.Placements));
    }

    [Fact]
    public void AModeThatMixesPlacements_IsNotByPlacement_AndListsThemNearFirst()
    {
        var modality = Modality.Of(Bimodal, ["far", "near", "far", "near", "near", "near"], ReportFormatting.Count);

        Assert.False(modality.ByPlacement);
        Assert.Equal("bimodal: 1.00 M (near ×1, far ×2), 3.00 M (near ×3)", modality.Text);
    }

    [Fact]
    public void OneStrayValue_IsAnOutlier_NotAMode()
    {
        Assert.Equal(ModalityKind.Unimodal, Of([1.0e6, 1.02e6, 0.99e6, 1.01e6, 1.03e6, 3.0e6]).Kind);
        // Two of them are a group of their own: two slow spells in six rounds.
        Assert.Equal(2, Of([1.0e6, 1.02e6, 0.99e6, 1.01e6, 0.75e6, 0.76e6]).ModeCount);
    }

    [Fact]
    public void ThreeGroups_AreTrimodal()
    {
        var modality = Of([1.0e6, 1.02e6, 0.99e6, 3.0e6, 3.1e6, 2.95e6, 6.0e6, 6.1e6, 5.9e6]);

        Assert.Equal(3, modality.ModeCount);
        Assert.StartsWith("trimodal: 1.00 M (×3), 3.00 M (×3), 6.00 M (×3)", modality.Text, StringComparison.Ordinal);
    }

    [Fact]
    public void IdenticalValues_AreOneMode_AndTwoIdenticalGroupsTwo()
    {
        Assert.Equal(ModalityKind.Unimodal, Of([2e6, 2e6, 2e6, 2e6, 2e6, 2e6]).Kind);
        Assert.Equal(2, Of([1e6, 1e6, 1e6, 3e6, 3e6, 3e6]).ModeCount);
    }

    [Fact]
    public void TiedPairs_AreNotModesOfTheirOwn()
    {
        // A run pooled with itself (or latency percentiles sharing HDR buckets): pairs of identical values a few percent
        // apart have no spread of their own, yet are one group; the placements are still two.
        Assert.Equal(2, Of([.. Bimodal, .. Bimodal]).ModeCount);
        Assert.Equal(ModalityKind.Unimodal, Of([1.0e6, 1.0e6, 1.02e6, 1.02e6, 1.04e6, 1.04e6]).Kind);
    }

    [Fact]
    public void OnSimulatedRepetitions_FalseAlarmsStayRare_AndAPlacementStepIsFound()
    {
        // What the doc comment's numbers rest on, seeded: six repetitions with 5 % noise, one group or two 2x apart.
        var random = new Random(25);
        double Noisy(double level) => level * (1 + 0.05 * Gaussian(random));
        int alarms = Enumerable.Range(0, 2000).Count(_ => Of([.. Enumerable.Range(0, 6).Select(_ => Noisy(1e6))]).Kind == ModalityKind.Multimodal);
        int found = Enumerable.Range(0, 2000).Count(_ => Of([.. Enumerable.Range(0, 6).Select(i => Noisy(i % 2 == 0 ? 1e6 : 2e6))]).ModeCount == 2);

        Assert.InRange(alarms, 0, 2000 * 3 / 100);
        Assert.InRange(found, 2000 * 75 / 100, 2000);
    }

    [Theory]
    [InlineData(0.5, 0.01)]
    [InlineData(0.3, 0.01)]
    [InlineData(0.9, 0.01)]
    [InlineData(1.0, 0.01)]
    [InlineData(0.5, 0.05)]
    [InlineData(0.5, 0.1)]
    [InlineData(1.0, 0.2)]
    public void PerfolizersLowlandDetector_SeesOneModeInSixValues_WhateverItsParameters(double sensitivity, double precision)
    {
        // Why Modality does not use it (see its remarks): if a Perfolizer update finds both groups, reconsider.
        var detector = new LowlandModalityDetector(sensitivity, precision);

        Assert.Equal(1, detector.DetectModes(new Pragmastat.Sample(Bimodal)).Modality);
        Assert.Equal(1, detector.DetectModes(new Pragmastat.Sample([1.0, 1.05, 0.98, 1.02, 3.1, 3.0, 2.9, 3.05, 1.01, 2.95])).Modality);
    }

    [Fact]
    public void PlacementClasses_AreDrawnOverTheWholeSuite_NotCellByCell()
    {
        // The first cell ran near only, 90–210 ns: a 2.1x gap on its own, narrower than the suite's near–far gap.
        double[] nearOnly = [90, 95, 210, 100, 92, 98];
        Assert.Equal("far", PlacementStrata.Of([.. nearOnly.Select(p => (double?)p)]).ClassOf(210));
        var report = Suite(
            Cell("uds", nearOnly, [1e6, 1e6, 1e6, 1e6, 1e6, 1e6]),
            Cell("shm-ring", [90, 560, 95, 590, 100, 610], [22e6, 6e6, 21e6, 6.1e6, 22.5e6, 5.9e6]));

        var cells = CellModality.Of(report);

        Assert.All(cells[0].Placements, p => Assert.Equal("near", p));
        Assert.Equal(["near", "far", "near", "far", "near", "far"], cells[1].Placements);
        Assert.Equal("bimodal by placement: 6.00 M (far ×3), 22.00 M (near ×3)", cells[1].MessagesPerSecond.Text);
        Assert.Equal(ModalityKind.Unimodal, cells[0].MessagesPerSecond.Kind);
        // Latency p50 moves with msg/s here (1e9 / rate): the tables add it when it is multimodal too.
        Assert.Equal(ModalityKind.Multimodal, cells[1].LatencyP50!.Kind);
        Assert.Contains("; latency p50 bimodal by placement: ", cells[1].Text, StringComparison.Ordinal);
    }

    [Fact]
    public void FailedRepetitions_KeepTheirPlacement_ButAreNotGrouped()
    {
        var cell = Cell("uds", [90, 560, 95, 590, 100, 610], [22e6, 6e6, 21e6, 6.1e6, 22.5e6, 5.9e6]);
        cell = cell with { Repetitions = [.. cell.Repetitions.Select((r, i) => i == 0 ? r with { Error = "agent exited" } : r)] };

        var modality = CellModality.Of(Suite(cell))[0];

        Assert.Equal(6, modality.Placements.Count);
        Assert.Equal(5, modality.MessagesPerSecond.Repetitions);
        Assert.Equal("bimodal by placement: 6.00 M (far ×3), 21.75 M (near ×2)", modality.MessagesPerSecond.Text);
    }

    private static Modality Of(IReadOnlyList<double> values) => Modality.Of(values, [.. values.Select(_ => PlacementStrata.All)], ReportFormatting.Count);

    private static SuiteReport Suite(params ReportCell[] cells) => new("suite-m", "modes", "COMPLETED", DateTimeOffset.UnixEpoch, null, cells[0].Repetitions.Count,
        ReportSamples.Environment, cells);

    private static ReportCell Cell(string transport, double[] probes, double[] rates) => new(new CellKey(transport, 8), TimeSpan.FromSeconds(2),
        TimeSpan.FromSeconds(0.5), [.. rates.Select((rate, i) => new RepetitionResult(i + 1, $"{transport}-{i + 1}", null, rate, rate * 8, 90, 90,
            new LatencyPercentiles(1000, 1e9 / rate, 2e9 / rate, 3e9 / rate, 4e9 / rate, 5e9 / rate, 6e9 / rate), [], probes[i]))], []);

    private static double Gaussian(Random random) =>
        Math.Sqrt(-2 * Math.Log(1 - random.NextDouble())) * Math.Cos(2 * Math.PI * random.NextDouble());
}
