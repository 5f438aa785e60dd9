using IpcBench.Daemon.Tests.Infrastructure;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Reports;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The planner StartSuite and `run` share, in process: the suite-wide fields reach every cell, and the two routes differ
/// only where `run` is lenient on purpose (its own machine's transports, --wait where offered).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class SuitePlannerTests
{
    private static readonly TransportRegistry Registry = TransportRegistry.CreateDefault();

    private static SuitePlanner Planner() =>
        new(new SpecValidator(Registry, Options.Create(new DaemonOptions())), Registry, new PresetCatalog(Registry.All.Select(t => t.Id)));

    [Fact]
    public void SuiteWideFields_ReachEveryCell_OfAMatrixAndOfAPreset()
    {
        var matrix = new SuiteSpec { Transports = { "channels", "tcp" }, PayloadBytes = { 8, 1024 }, Duration = Duration.FromTimeSpan(TimeSpan.FromSeconds(1)) };
        var preset = new SuiteSpec { Preset = "reference-1" };
        foreach (var spec in new[] { matrix, preset })
        {
            spec.PublisherCpus = "0";
            spec.SubscriberCpus = "1";
            spec.MaxNoisePercent = 50;
            spec.LatencySampleEvery = 4;

            var cells = Planner().Plan(spec).Cells;

            Assert.NotEmpty(cells);
            Assert.All(cells, c => Assert.Equal(("0", "1", 50.0, 4), (c.Placement.PublisherCpus.ToString(), c.Placement.SubscriberCpus.ToString(),
                c.Placement.MaxNoisePercent ?? 0, c.LatencySampleEvery)));
        }

        // Absent, a cell keeps its own: unpinned, no bound, the default sampling (64 for a closed-loop stream).
        matrix = new SuiteSpec { Transports = { "channels" }, PayloadBytes = { 8 }, Duration = Duration.FromTimeSpan(TimeSpan.FromSeconds(1)) };
        Assert.All(Planner().Plan(matrix).Cells, c => Assert.Equal((true, (double?)null, LatencySampling.Resolve(0, false, 0)),
            (c.Placement.PublisherCpus.IsEmpty, c.Placement.MaxNoisePercent, c.LatencySampleEvery)));
    }

    /// <summary>A wait strategy one transport lacks: StartSuite refuses the suite naming the cell; `run` runs that transport at its default.</summary>
    [Fact]
    public void AWaitATransportLacks_IsRefusedBySuites_AndLeftToItsDefaultByRun()
    {
        var lacking = Registry.All.First(t => !t.Capabilities.WaitModes.Contains(WaitMode.Spin));
        var offering = Registry.All.First(t => t.Capabilities.WaitModes.Contains(WaitMode.Spin) && t.UnavailableReason is null);
        var spec = new SuiteSpec
        {
            Transports = { offering.Id, lacking.Id }, PayloadBytes = { 8 }, WaitStrategies = { WaitStrategy.Spin },
            Duration = Duration.FromTimeSpan(TimeSpan.FromSeconds(1)),
        };

        var refusal = Assert.Throws<RequestRefusedException>(() => Planner().Plan(spec.Clone()));
        Assert.Equal("spec.wait_strategies", refusal.Field);
        Assert.Contains(lacking.Id, refusal.Message, StringComparison.Ordinal);

        var cells = Planner().Plan(spec.Clone(), _ => true).Cells;
        Assert.Equal([(offering.Id, WaitMode.Spin), (lacking.Id, lacking.Capabilities.DefaultWaitMode)], cells.Select(c => (c.Transport.Id, c.WaitMode)));
    }

    [Fact]
    public void RunsHere_DropsTheCellsOfATransportThisMachineLacks()
    {
        var spec = new SuiteSpec { Transports = { "channels", "tcp" }, PayloadBytes = { 8, 64 }, Duration = Duration.FromTimeSpan(TimeSpan.FromSeconds(1)) };

        var cells = Planner().Plan(spec, id => id != "tcp").Cells;

        Assert.Equal([("channels", 8), ("channels", 64)], cells.Select(c => (c.Transport.Id, c.PayloadBytes)));
    }
}
