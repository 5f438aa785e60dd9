using Google.Protobuf.WellKnownTypes;
using IpcBench.V1;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run`'s options as the one SuiteSpec every route of `run` plans: the matrix (transports x access x payloads x rates,
/// one N:M shape, mode and wait) or the preset, with repetitions, placement, latency sampling and offered load. A local
/// run plans it in process with the planner StartSuite uses (SuitePlanner, lenient about what this machine lacks);
/// `run --daemons` sends it to every daemon, which plans and validates it as StartSuite does. The CLI checks syntax;
/// the rules are the planner's, and RunOptions.OptionOf names a refusal's field as the option it came from.
/// </summary>
internal static class RunSuiteSpec
{
    /// <summary>The name of a local run's suite (the report's title says which command made it).</summary>
    public const string Local = "run";

    /// <summary>The name of a lab run's suite on every daemon.</summary>
    public const string Lab = "run --daemons";

    public static SuiteSpec From(RunSettings settings, string name)
    {
        var spec = new SuiteSpec { Repetitions = settings.Repetitions, Name = name };
        // --repetitions auto: each daemon adds rounds per cell until its own median is known to the target.
        if (settings.TargetPrecisionPercent is { } target)
        {
            spec.Repetitions = 0;
            spec.TargetPrecisionPercent = target;
            spec.MaxRepetitions = settings.MaxRepetitions;
        }

        // Placement only when asked for: GetSuite then shows the spec as the user gave it.
        var placement = settings.Placement;
        if (placement.PublisherCpus.Length > 0)
        {
            spec.PublisherCpus = placement.PublisherCpus;
        }

        if (placement.SubscriberCpus.Length > 0)
        {
            spec.SubscriberCpus = placement.SubscriberCpus;
        }

        if (placement.RealtimePriority > 0)
        {
            spec.RealtimePriority = placement.RealtimePriority;
        }

        if (placement.LockMemory)
        {
            spec.LockMemory = true;
        }

        if (settings.LatencySampleEvery != 0)
        {
            spec.LatencySampleEvery = settings.LatencySampleEvery;
        }

        if (settings.Preset is { } preset)
        {
            // As locally: a preset keeps its own duration and warmup unless they are given.
            spec.Preset = preset;
            spec.Name = $"{name} --preset {preset}";
            spec.Duration = settings.DurationGiven ? Duration.FromTimeSpan(settings.Duration) : null;
            spec.Warmup = settings.WarmupGiven ? Duration.FromTimeSpan(settings.Warmup) : null;
            // As locally: a search bound overrides a saturation preset's own (rates with a preset the daemon refuses).
            AddLoad(spec, settings);
            return spec;
        }

        spec.Transports.AddRange(settings.Transports);
        spec.PayloadBytes.AddRange(settings.Payloads);
        spec.Topologies.Add(new SuiteTopology { Publishers = settings.Publishers, Subscribers = settings.Subscribers, Topology = settings.Topology });
        spec.PayloadAccess.AddRange(settings.Access);
        spec.Modes.Add(settings.Mode);
        if (settings.Wait is { } wait)
        {
            spec.WaitStrategies.Add(Workload.WaitStrategies.ToProto(wait));
        }

        // A soak runs the matrix's cells for its length, side by side (SoakRun).
        spec.Duration = Duration.FromTimeSpan(settings.SoakDuration ?? settings.Duration);
        spec.Warmup = Duration.FromTimeSpan(settings.Warmup);
        spec.RatePerPublisher = settings.Rate;
        AddLoad(spec, settings);
        return spec;
    }

    /// <summary>--rates (a sweep, even of one: rate_per_publisher stays 0), --rate, and --find-max-rate's search.</summary>
    private static void AddLoad(SuiteSpec spec, RunSettings settings)
    {
        if (settings.Load is not { } load)
        {
            return;
        }

        if (load.Search is { } search)
        {
            spec.RateSearch = Control.SuiteRates.ToProto(search);
        }

        if (load.Swept)
        {
            spec.RatePerPublisher = 0;
            spec.RatesPerPublisher.AddRange(load.Rates);
        }
        else if (load.Rates.Count == 1 && spec.Preset.Length == 0)
        {
            spec.RatePerPublisher = load.Rates[0];
        }
    }
}
