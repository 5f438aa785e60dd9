using Google.Protobuf.Reflection;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Reports;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// A SuiteSpec (a matrix, or a preset with optional duration, warmup and repetitions; either with placement and a noise
/// bound for every cell) made into the engine's plan: every cell is a ScenarioSpec checked by SpecValidator, so a suite
/// refuses exactly what StartScenario would, naming the suite's field.
/// </summary>
public sealed class SuitePlanner(SpecValidator validator, TransportRegistry transports, PresetCatalog presets)
{
    /// <summary>Cells × repetitions: a suite is a batch of short scenarios, not a soak.</summary>
    public const int MaxScenarios = 2000;

    public const int MaxNameLength = 200;

    /// <summary>
    /// Placement fields whose refusal does not depend on the cell. realtime_priority is not among them: SCHED_FIFO is
    /// refused with a polling wait strategy, which is a cell's.
    /// </summary>
    private static readonly HashSet<string> CellIndependent = new(StringComparer.Ordinal)
    {
        "spec.publisher_cpus", "spec.subscriber_cpus", "spec.lock_memory", "spec.max_noise_percent", "spec.latency_sample_every",
    };

    /// <param name="runsHere">
    /// `run`'s plan of its own machine (null for StartSuite, which refuses instead): the cells of a transport it rejects
    /// are dropped (`run` says which and why), and a wait strategy applies only to the transports that offer it, the
    /// others running their default, so `run --wait spin` still measures every transport.
    /// </param>
    public SuitePlan Plan(SuiteSpec? spec, Func<string, bool>? runsHere = null)
    {
        if (spec is null)
        {
            throw Invalid("spec", "is required");
        }

        var adaptive = Adaptive(spec);
        int repetitions = adaptive is not null ? 0 : spec.Repetitions == 0 ? 1 : spec.Repetitions;
        if (adaptive is null && (repetitions < 1 || repetitions > RoundPlanner.MaxRepetitions))
        {
            throw Invalid("spec.repetitions", $"must be 1..{RoundPlanner.MaxRepetitions} (0 means 1, or adaptive with target_precision_percent); got {spec.Repetitions}");
        }

        if (spec.Name.Length > MaxNameLength)
        {
            throw Invalid("spec.name", $"must be at most {MaxNameLength} characters; got {spec.Name.Length}");
        }

        var search = SuiteRates.Search(spec, string.IsNullOrEmpty(spec.Preset) ? null : presets.Find(spec.Preset));
        var cells = string.IsNullOrEmpty(spec.Preset) ? Matrix(spec) : Preset(spec);
        if (runsHere is not null)
        {
            cells = [.. cells.Where(c => runsHere(c.Transport)).Select(WaitWhereOffered).Distinct()];
        }

        // Judged by what it may run: an adaptive suite by its bound, a search by its closed-loop round and its most probes.
        int rounds = ScenariosPerCell.Most(repetitions, adaptive, search);
        if (cells.Count * rounds > MaxScenarios)
        {
            string what = search is not null ? "(1 + max_steps)" : adaptive is null ? "repetitions" : "max_repetitions";
            throw Invalid("spec", $"{cells.Count} cells x {rounds} {what} = {cells.Count * rounds} scenarios; at most {MaxScenarios} per suite");
        }

        var name = spec.Name.Length > 0 ? spec.Name : string.IsNullOrEmpty(spec.Preset) ? "suite" : spec.Preset;
        var resolved = cells.Select(cell => Resolve(WithPlacement(cell, spec), name)).ToList();
        return new SuitePlan(name, spec.Preset, repetitions, resolved) { Adaptive = adaptive, Search = search };
    }

    /// <summary>
    /// Adaptive repetitions, or null for fixed ones: repetitions 0 with target_precision_percent. Without the target, 0
    /// stays 1 as it always was, and max_repetitions has nothing to bound.
    /// </summary>
    private static AdaptiveTarget? Adaptive(SuiteSpec spec)
    {
        if (!spec.HasTargetPrecisionPercent)
        {
            return spec.MaxRepetitions == 0 ? null
                : throw Invalid("spec.max_repetitions", $"bounds adaptive repetitions only: give target_precision_percent (with repetitions 0) too, or leave it 0; got {spec.MaxRepetitions}");
        }

        double target = spec.TargetPrecisionPercent;
        if (spec.Repetitions != 0)
        {
            throw Invalid("spec.target_precision_percent", $"asks for adaptive repetitions, so repetitions must be 0; got repetitions {spec.Repetitions}");
        }

        if (!(target > 0 && target <= 100))
        {
            throw Invalid("spec.target_precision_percent", $"must be > 0 and <= 100 (the 95 % confidence interval's half-width around a cell's median msg/s, in percent of it); got {target}");
        }

        int max = spec.MaxRepetitions == 0 ? RoundPlanner.DefaultMaxAdaptiveRepetitions : spec.MaxRepetitions;
        if (max < RoundPlanner.MinAdaptiveRepetitions || max > RoundPlanner.MaxRepetitions)
        {
            throw Invalid("spec.max_repetitions",
                $"must be {RoundPlanner.MinAdaptiveRepetitions}..{RoundPlanner.MaxRepetitions} (0 means {RoundPlanner.DefaultMaxAdaptiveRepetitions}); got {spec.MaxRepetitions}");
        }

        return new AdaptiveTarget(target, max);
    }

    private List<ScenarioSpec> Preset(SuiteSpec spec)
    {
        var preset = presets.Find(spec.Preset)
            ?? throw Invalid("spec.preset", $"'{spec.Preset}' is not a preset; one of: {string.Join(", ", presets.Suites.Select(p => p.Id))}");
        string? matrixField = spec.Transports.Count > 0 ? "transports" : spec.PayloadBytes.Count > 0 ? "payload_bytes"
            : spec.Topologies.Count > 0 ? "topologies" : spec.PayloadAccess.Count > 0 ? "payload_access"
            : spec.WaitStrategies.Count > 0 ? "wait_strategies" : spec.Modes.Count > 0 ? "modes"
            : spec.RatePerPublisher != 0 ? "rate_per_publisher" : spec.RatesPerPublisher.Count > 0 ? "rates_per_publisher" : null;
        if (matrixField is not null)
        {
            throw Invalid($"spec.{matrixField}", $"must be empty with a preset (the preset '{preset.Id}' fixes the matrix); only duration, warmup, repetitions (or target_precision_percent and max_repetitions), name and the placement fields may be given");
        }

        // duration and warmup may shorten a preset (a quick check of the whole path); the published figures were measured over the preset's own.
        return [.. preset.Cells.Select(cell => SuiteCells.ToSpec(cell.Key, preset.Duration, preset.Warmup, preset.Id))
            .Select(s =>
            {
                s.Duration = spec.Duration ?? s.Duration;
                s.Warmup = spec.Warmup ?? s.Warmup;
                return s;
            })];
    }

    private List<ScenarioSpec> Matrix(SuiteSpec spec)
    {
        if (spec.PayloadBytes.Count == 0)
        {
            throw Invalid("spec.payload_bytes", "needs at least one payload size (or give a preset)");
        }

        if (spec.Duration is null)
        {
            throw Invalid("spec.duration", "is required: every scenario of a suite runs for this long (a suite never soaks)");
        }

        var transportIds = spec.Transports.Count > 0
            ? [.. spec.Transports]
            : transports.All.Where(t => t.UnavailableReason is null).Select(t => t.Id).ToList();
        var topologies = spec.Topologies.Count > 0 ? [.. spec.Topologies] : new List<SuiteTopology> { new() { Publishers = 1, Subscribers = 1 } };
        var accesses = spec.PayloadAccess.Count > 0 ? [.. spec.PayloadAccess] : new List<PayloadAccess> { PayloadAccess.Full };
        var waits = spec.WaitStrategies.Count > 0 ? [.. spec.WaitStrategies] : new List<WaitStrategy> { WaitStrategy.Unspecified };
        var modes = spec.Modes.Count > 0 ? [.. spec.Modes] : new List<Mode> { Mode.Stream };
        var rates = SuiteRates.Sweep(spec);
        return [.. from transport in transportIds
                   from payload in spec.PayloadBytes
                   from topology in topologies
                   from access in accesses
                   from wait in waits
                   from mode in modes
                   from rate in rates
                   select new ScenarioSpec
                   {
                       Transport = transport,
                       PayloadBytes = payload,
                       Publishers = topology.Publishers,
                       Subscribers = topology.Subscribers,
                       Topology = topology.Topology,
                       PayloadAccess = access,
                       WaitStrategy = wait,
                       Mode = mode,
                       Duration = spec.Duration,
                       Warmup = spec.Warmup ?? new Duration(),
                       RatePerPublisher = rate,
                   }];
    }

    private ScenarioSpec WaitWhereOffered(ScenarioSpec cell)
    {
        if (Workload.WaitStrategies.FromProto(cell.WaitStrategy) is { } wait && transports.Find(cell.Transport) is { } transport
            && !transport.Capabilities.WaitModes.Contains(wait))
        {
            cell.WaitStrategy = WaitStrategy.Unspecified;
        }

        return cell;
    }

    /// <summary>
    /// The suite's placement, noise bound and latency sampling on a cell: the same for every cell, as none is a cell
    /// dimension. Each is an optional field of both messages with the same name and type; one given is copied, one
    /// absent leaves the cell's own (a preset's cell has none).
    /// </summary>
    private static ScenarioSpec WithPlacement(ScenarioSpec cell, SuiteSpec spec)
    {
        foreach (var (from, to) in SuiteWideFields)
        {
            if (from.Accessor.HasValue(spec))
            {
                to.Accessor.SetValue(cell, from.Accessor.GetValue(spec));
            }
        }

        return cell;
    }

    private static readonly (FieldDescriptor From, FieldDescriptor To)[] SuiteWideFields =
        [.. new[] { "publisher_cpus", "subscriber_cpus", "realtime_priority", "lock_memory", "max_noise_percent", "latency_sample_every" }
            .Select(name => (SuiteSpec.Descriptor.FindFieldByName(name), ScenarioSpec.Descriptor.FindFieldByName(name)))];

    private ResolvedSpec Resolve(ScenarioSpec cell, string name)
    {
        cell.Name = name;
        try
        {
            return validator.Resolve(cell);
        }
        catch (RequestRefusedException e) when (e.Field is { } field)
        {
            // The cell's field named as the suite's: spec.transport -> spec.transports, spec.publishers -> spec.topologies, ...
            var suiteField = field switch
            {
                "spec.transport" => "spec.transports",
                "spec.publishers" or "spec.subscribers" or "spec.topology" => "spec.topologies",
                "spec.wait_strategy" => "spec.wait_strategies",
                "spec.mode" => "spec.modes",
                _ => field,
            };
            var reason = e.Message[(field.Length + 2)..];
            if (CellIndependent.Contains(field))
            {
                // The suite's own field, wrong for every cell alike: naming one cell would suggest it is about that cell.
                throw new RequestRefusedException(e.Kind, suiteField, reason);
            }

            throw new RequestRefusedException(e.Kind, suiteField, $"cell {cell.Transport} {cell.PayloadBytes} B {cell.Publishers}:{cell.Subscribers}: {reason}");
        }
    }

    private static RequestRefusedException Invalid(string field, string reason) => new(RefusalKind.InvalidArgument, field, reason);
}
