using Google.Protobuf.WellKnownTypes;
using IpcBench.V1;

namespace IpcBench.Daemon.Run;

/// <summary>
/// The SuiteSpec `run --daemons` sends every daemon: the matrix run's own options would build locally (transports x
/// access x payloads, one N:M shape, mode and wait), or the preset, with the same repetitions and placement. Each
/// daemon plans and validates it as StartSuite does, so a daemon that lacks a transport refuses it and says so.
/// </summary>
internal static class LabSuiteSpec
{
    public const string Name = "run --daemons";

    public static SuiteSpec From(RunSettings settings)
    {
        var spec = new SuiteSpec { Repetitions = settings.Repetitions, Name = Name };
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

        if (settings.Preset is { } preset)
        {
            // As locally: a preset keeps its own duration and warmup unless they are given.
            spec.Preset = preset;
            spec.Name = $"{Name} --preset {preset}";
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

        spec.Duration = Duration.FromTimeSpan(settings.Duration);
        spec.Warmup = Duration.FromTimeSpan(settings.Warmup);
        spec.RatePerPublisher = settings.Rate;
        AddLoad(spec, settings);
        return spec;
    }

    /// <summary>--rates (a sweep: rate_per_publisher stays 0) and --find-max-rate, as run hands them to its local suite.</summary>
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

        if (load.Rates.Count > 1)
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
