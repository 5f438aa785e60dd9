using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Model;
using IpcBench.Reports;
using IpcBench.Daemon.Schema;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// A suite in control.proto's terms: the engine's SuiteSnapshot with each cell's statistics and published figures taken
/// from the report model (so the response, the exports and `run` show the same medians). Scenario parts go through
/// Schema/ScenarioProtos, the one scenario mapping.
/// </summary>
public static class SuiteProtos
{
    public static SuiteState ToProto(SuiteRunState state) => (SuiteState)state;

    public static SuiteRunState FromProto(SuiteState state) => (SuiteRunState)state;

    /// <param name="preset">The suite's preset, if it named one (its cells' defaults are left out of the spec).</param>
    public static Suite ToProto(SuiteSnapshot suite, SuiteReport report, RunEnvironment? environment, ReferencePreset? preset)
    {
        var proto = new Suite
        {
            Id = suite.Id,
            Name = suite.Name,
            Spec = SpecOf(suite, preset),
            State = ToProto(suite.State),
            Error = suite.Error,
            CreatedAt = Timestamp.FromDateTime(Utc(suite.CreatedAt)),
            StartedAt = suite.StartedAt is { } started ? Timestamp.FromDateTime(Utc(started)) : null,
            EndedAt = suite.EndedAt is { } ended ? Timestamp.FromDateTime(Utc(ended)) : null,
            ScenariosTotal = suite.ScenariosTotal,
            ScenariosDone = suite.ScenariosDone,
            Environment = environment is null ? null : ScenarioProtos.ToProto(environment),
        };
        var modality = CellModality.Of(report);
        for (int i = 0; i < suite.Cells.Count; i++)
        {
            var record = suite.Cells[i];
            var cell = new SuiteCell
            {
                Spec = ScenarioProtos.ToProto(record.Spec),
                NoiseRetries = record.Retries,
                FailedNoisy = record.NoisyAttempts.Any(a => !a.Retried),
                RepetitionStop = (RepetitionStop)record.Stop,
            };
            cell.ScenarioIds.AddRange(record.ScenarioIds);
            cell.NoisyAttempts.AddRange(record.NoisyAttempts.Select(a => new SuiteNoisyAttempt
            {
                Round = a.Round,
                ScenarioId = a.ScenarioId,
                NoisePercent = a.NoisePercent,
                Retried = a.Retried,
            }));
            AddSearch(cell, record);
            var summary = report.Cells[i].Summary;
            cell.Stats = ToProto(summary, modality[i]);
            foreach (var figure in report.Cells[i].Published)
            {
                cell.Published.Add(SuiteCells.ToProto(figure, figure.Measured(summary)));
            }

            proto.Cells.Add(cell);
        }

        return proto;
    }

    /// <summary>A rate search's probes and answer on its cell; nothing for a cell without one.</summary>
    private static void AddSearch(SuiteCell cell, SuiteCellRecord record)
    {
        if (record.Search is not { } search)
        {
            return;
        }

        cell.RateProbes.AddRange(record.Probes.Select(p => new RateProbe
        {
            RatePerPublisher = p.RatePerPublisher,
            ScenarioId = p.ScenarioId,
            Passed = p.Passed,
            Reason = p.Reason,
        }));
        cell.RateSearchResult = search.Result;
        if (search.SustainableRate is { } rate)
        {
            cell.SustainableRatePerPublisher = rate;
            cell.SustainableBracketLow = rate;
        }

        if (search.Ended && search.BracketHigh is { } high)
        {
            cell.SustainableBracketHigh = high;
        }
    }

    public static SuiteCellStats ToProto(CellSummary s)
    {
        var stats = Stats(s);
        if (s.MedianPrecisionPercent is { } precision)
        {
            stats.MedianPrecisionPercent = precision;
        }

        return stats;
    }

    private static SuiteCellStats Stats(CellSummary s) => new()
    {
        Repetitions = s.Repetitions,
        MessagesPerSecond = Value(s.MessagesPerSecond),
        BytesPerSecond = Value(s.BytesPerSecond),
        DaemonCpuPercent = Value(s.DaemonCpuPercent),
        AgentsCpuPercent = Value(s.AgentsCpuPercent),
        LatencyP50 = Nanoseconds(s.LatencyP50),
        LatencyP90 = Nanoseconds(s.LatencyP90),
        LatencyP99 = Nanoseconds(s.LatencyP99),
        LatencyP999 = Nanoseconds(s.LatencyP999),
        LatencyP9999 = Nanoseconds(s.LatencyP9999),
        LatencyMax = Nanoseconds(s.LatencyMax),
        SpreadPercent = s.SpreadPercent,
        SpreadExceeded = s.SpreadExceeded,
    };

    /// <summary>The statistics with the modes of msg/s (IpcBench.Reports/Modality): 0 modes when too few repetitions to tell.</summary>
    public static SuiteCellStats ToProto(CellSummary s, CellModality modality)
    {
        var stats = ToProto(s);
        stats.Modes = modality.MessagesPerSecond.ModeCount;
        stats.Modality = modality.Text;
        return stats;
    }

    /// <summary>
    /// The spec as submitted: a preset's id (with the duration and warmup it ran if they were overridden), or the matrix
    /// its cells span; with either, the placement every cell ran with.
    /// </summary>
    public static SuiteSpec SpecOf(SuiteSnapshot suite, ReferencePreset? preset)
    {
        var spec = new SuiteSpec { Name = suite.Name, Repetitions = suite.Repetitions, Preset = suite.Preset };
        if (suite.Adaptive is { } adaptive)
        {
            spec.TargetPrecisionPercent = adaptive.PrecisionPercent;
            spec.MaxRepetitions = adaptive.MaxRepetitions;
        }

        if (suite.RateSearch is { } search)
        {
            spec.RateSearch = SuiteRates.ToProto(search);
        }

        var first = suite.Cells.Count > 0 ? suite.Cells[0].Spec : null;
        if (first is not null)
        {
            AddPlacement(spec, first);
        }

        if (suite.Preset.Length > 0)
        {
            if (first is not null && preset is not null && (first.Duration != preset.Duration || first.Warmup != preset.Warmup))
            {
                spec.Duration = first.Duration is { } d ? Duration.FromTimeSpan(d) : null;
                spec.Warmup = first.Warmup is { } w ? Duration.FromTimeSpan(w) : null;
            }

            return spec;
        }

        var cells = suite.Cells.Select(c => c.Spec).ToList();
        spec.Transports.AddRange(cells.Select(c => c.Transport).Distinct());
        spec.PayloadBytes.AddRange(cells.Select(c => c.PayloadBytes).Distinct());
        spec.Topologies.AddRange(cells.Select(c => (c.Publishers, c.Subscribers, c.Topology)).Distinct()
            .Select(t => new SuiteTopology { Publishers = t.Publishers, Subscribers = t.Subscribers, Topology = ScenarioProtos.ToProto(t.Topology) }));
        spec.PayloadAccess.AddRange(cells.Select(c => ScenarioProtos.ToProto(c.PayloadAccess)).Distinct());
        spec.Modes.AddRange(cells.Select(c => ScenarioProtos.ToProto(c.Mode)).Distinct());
        if (first is not null)
        {
            spec.Duration = first.Duration is { } d ? Duration.FromTimeSpan(d) : null;
            spec.Warmup = first.Warmup is { } w ? Duration.FromTimeSpan(w) : null;
            var rates = cells.Select(c => c.RatePerPublisher).Distinct().ToList();
            if (rates.Count > 1)
            {
                spec.RatesPerPublisher.AddRange(rates);
            }
            else
            {
                spec.RatePerPublisher = first.RatePerPublisher;
            }
        }

        return spec;
    }

    /// <summary>Only what was set: an unpinned, normal-priority suite without a noise bound shows none of the fields.</summary>
    private static void AddPlacement(SuiteSpec spec, RunSpec cell)
    {
        if (!string.IsNullOrEmpty(cell.PublisherCpus))
        {
            spec.PublisherCpus = cell.PublisherCpus;
        }

        if (!string.IsNullOrEmpty(cell.SubscriberCpus))
        {
            spec.SubscriberCpus = cell.SubscriberCpus;
        }

        if (cell.RealtimePriority is { } priority && priority > 0)
        {
            spec.RealtimePriority = priority;
        }

        if (cell.LockMemory == true)
        {
            spec.LockMemory = true;
        }

        if (cell.MaxNoisePercent is { } maxNoise)
        {
            spec.MaxNoisePercent = maxNoise;
        }
    }

    private static RepeatedValue Value(Spread s) => new() { Median = s.Median, Min = s.Min, Max = s.Max };

    private static RepeatedDuration Nanoseconds(Spread s) => new()
    {
        Median = ScenarioProtos.Nanoseconds((long)s.Median),
        Min = ScenarioProtos.Nanoseconds((long)s.Min),
        Max = ScenarioProtos.Nanoseconds((long)s.Max),
    };

    private static DateTime Utc(DateTime time) => DateTime.SpecifyKind(time, DateTimeKind.Utc);
}
