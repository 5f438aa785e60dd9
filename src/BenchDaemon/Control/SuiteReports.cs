using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Reports;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;

namespace IpcBench.Daemon.Control;

/// <summary>
/// A suite's report model fed from its scenarios' real results: every repetition's rates, CPU, latency percentiles and
/// per-second series, read from the catalog (memory or database). What ExportSuite, CompareSuites and `run` render.
/// </summary>
public sealed class SuiteReports(ScenarioCatalog catalog, PresetCatalog presets)
{
    public SuiteReport Build(SuiteSnapshot suite)
    {
        var preset = string.IsNullOrEmpty(suite.Preset) ? null : presets.Find(suite.Preset);
        RunEnvironment? environment = null;
        string classes = string.Empty;
        var latestAt = DateTime.MinValue;
        var cells = new List<ReportCell>(suite.Cells.Count);
        for (int i = 0; i < suite.Cells.Count; i++)
        {
            var cell = suite.Cells[i];
            var repetitions = new List<RepetitionResult>();
            for (int r = 0; r < cell.ScenarioIds.Count; r++)
            {
                if (Read(cell.ScenarioIds[r]) is not { } result)
                {
                    repetitions.Add(new RepetitionResult(r + 1, cell.ScenarioIds[r], "the scenario is no longer kept (IpcBench:MaxStoredScenarios retention)",
                        0, 0, 0, 0, LatencyPercentiles.None, []));
                    continue;
                }

                environment ??= result.Scenario.Environment;
                // The classes as the latest scenario learned them: from the most probes.
                if (result.Scenario.Environment?.PlacementClasses is { Length: > 0 } learned && result.Scenario.CreatedAt >= latestAt)
                {
                    (classes, latestAt) = (learned, result.Scenario.CreatedAt);
                }

                repetitions.Add(Repetition(r + 1, result));
            }

            // A preset's own keys: its labels and published figures are written against them.
            var presetCell = preset is null ? null : PresetCellOf(preset, KeyOf(cell.Spec));
            cells.Add(new ReportCell(presetCell?.Key ?? KeyOf(cell.Spec), cell.Spec.Duration ?? TimeSpan.Zero, cell.Spec.Warmup ?? TimeSpan.Zero,
                repetitions, presetCell?.Published ?? [],
                [.. cell.NoisyAttempts.Select(a => new NoisyAttempt(a.Round, a.ScenarioId, a.NoisePercent, a.Retried))], StopOf(cell.Stop), Search(cell)));
        }

        var adaptive = suite.Adaptive is { } a ? new AdaptiveRepetitions(a.PrecisionPercent, RoundPlanner.MinAdaptiveRepetitions, a.MaxRepetitions) : null;
        return new SuiteReport(suite.Id, suite.Name, suite.State.ToString().ToUpperInvariant(), Utc(suite.CreatedAt), suite.EndedAt is { } end ? Utc(end) : null,
            suite.Repetitions, Environment(environment) with { PlacementClasses = classes }, cells, preset?.Id, preset?.Title, preset?.Reproduces, adaptive);
    }

    /// <summary>A cell's search with each probe's figures, read as the repetitions are; null for a cell without one.</summary>
    private RateSearchReport? Search(SuiteCellRecord cell) => cell.Search is not { } search ? null
        : new RateSearchReport(search.SustainableRate, search.Ended ? search.BracketHigh : null, search.Result, [.. cell.Probes.Select((p, i) =>
            new RateProbeResult(p.RatePerPublisher, p.Passed, p.Reason, Read(p.ScenarioId) is { } result ? Repetition(i + 1, result)
                : new RepetitionResult(i + 1, p.ScenarioId, "the scenario is no longer kept", 0, 0, 0, 0, LatencyPercentiles.None, [])))]);

    private static StopReason StopOf(CellStop stop) => stop switch
    {
        CellStop.TargetReached => StopReason.TargetReached,
        CellStop.MaxRepetitions => StopReason.MaxRepetitions,
        CellStop.SuiteStopped => StopReason.SuiteStopped,
        _ => StopReason.None,
    };

    /// <summary>
    /// The preset's cell a suite cell ran, by key rather than position (`run` leaves out the cells of transports the
    /// machine lacks): the same key, or the preset's transport-default wait that the cell's resolved wait came from.
    /// </summary>
    private static PresetCell? PresetCellOf(ReferencePreset preset, CellKey key) =>
        preset.Cells.FirstOrDefault(p => p.Key == key)
        ?? preset.Cells.FirstOrDefault(p => p.Key.Wait == CellWait.Default && p.Key == key with { Wait = CellWait.Default });

    public static CellKey KeyOf(RunSpec spec) => new(
        spec.Transport,
        spec.PayloadBytes,
        spec.Publishers,
        spec.Subscribers,
        spec.Topology == RunTopology.Paired ? CellTopology.Paired : CellTopology.AllToAll,
        spec.PayloadAccess == RunPayloadAccess.HeaderOnly ? CellAccess.HeaderOnly : CellAccess.Full,
        spec.Mode == RunMode.RoundTrip ? CellMode.RoundTrip : CellMode.Stream,
        spec.WaitMode switch
        {
            WaitMode.Spin => CellWait.Spin,
            WaitMode.Yield => CellWait.Yield,
            WaitMode.Block => CellWait.Block,
            _ => CellWait.Default,
        },
        spec.RatePerPublisher);

    private ScenarioResult? Read(string scenarioId)
    {
        try
        {
            return catalog.Record(catalog.Get(scenarioId));
        }
        catch (RequestRefusedException e) when (e.Kind == RefusalKind.NotFound)
        {
            return null;
        }
    }

    private static RepetitionResult Repetition(int round, ScenarioResult result)
    {
        var scenario = result.Scenario;
        var series = result.Series.Select(p => new SeriesPoint(p.Elapsed.TotalSeconds, p.MessagesPerSecond, p.DaemonCpuPercent, p.AgentsCpuPercent)).ToList();
        if (scenario.State != RunState.Completed || scenario.Stats is not { } stats)
        {
            var why = scenario.Error.Length > 0 ? scenario.Error : $"ended {scenario.State.ToString().ToUpperInvariant()}";
            return new RepetitionResult(round, scenario.Id, why, 0, 0, 0, 0, LatencyPercentiles.None, series);
        }

        double daemon = stats.Processes.Where(p => p.Role == ProcessUsage.DaemonRole).Sum(p => p.CpuPercent);
        double agents = stats.Processes.Where(p => p.Role == ProcessUsage.AgentRole).Sum(p => p.CpuPercent);
        var latency = stats.Latency is { } l
            ? new LatencyPercentiles(l.Samples, l.P50Ns ?? 0, l.P90Ns ?? 0, l.P99Ns ?? 0, l.P999Ns ?? 0, l.P9999Ns ?? 0, l.MaxNs ?? 0)
            : LatencyPercentiles.None;
        return new RepetitionResult(round, scenario.Id, null, stats.MessagesPerSecond, stats.BytesPerSecond, daemon, agents, latency, series,
            scenario.Environment?.CoreToCoreRoundTripNs,
            [.. stats.Validity.Select(v => new ValidityIssue(v.KindName, v.Detail))], stats.SenderLag?.P99Ns, stats.NoisePercent);
    }

    internal static ReportEnvironment Environment(RunEnvironment? e) => new(
        e?.Hostname ?? System.Environment.MachineName,
        e?.CpuModel ?? "unknown",
        e?.LogicalCores ?? System.Environment.ProcessorCount,
        e?.Kernel ?? "unknown",
        e?.Os ?? "unknown",
        e?.DotnetVersion ?? System.Environment.Version.ToString(),
        BuildInfo.Current.Version,
        e?.CoreToCoreRoundTripNs,
        e?.ClockSource ?? string.Empty,
        e?.ClockReadNs);

    private static DateTimeOffset Utc(DateTime time) => new(DateTime.SpecifyKind(time, DateTimeKind.Utc));
}
