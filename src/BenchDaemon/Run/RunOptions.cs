using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Lab;
using IpcBench.Transports;
using IpcBench.V1;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run`'s options. Every value that can be checked without the daemon is checked while parsing, so a bad one is a
/// usage error (exit 2) naming the option and what it takes, before the host, the database or any agent starts.
/// </summary>
internal sealed class RunOptions
{
    public Option<string?> Transports { get; } = new("--transports") { Description = "Comma-separated transport ids (default: every available one)" };

    public Option<string> Payloads { get; } = Checked(new Option<string>("--payloads")
    {
        Description = "Comma-separated payload sizes in bytes", DefaultValueFactory = _ => "8,1024,65536,524288",
    }, value => ParsePayloads(value));

    public Option<int> Publishers { get; } = Whole("--publishers", "Publishers per scenario (N)", 1, min: 1);

    public Option<int> Subscribers { get; } = Whole("--subscribers", "Subscribers per scenario (M)", 1, min: 1);

    public Option<string> Duration { get; } = Checked(new Option<string>("--duration")
    {
        Description = "Measured time per scenario, e.g. 10s, 500ms, 2m", DefaultValueFactory = _ => "2s",
    }, value => ParseDuration("--duration", value));

    public Option<string> Warmup { get; } = Checked(new Option<string>("--warmup")
    {
        Description = "Warmup per scenario", DefaultValueFactory = _ => "500ms",
    }, value => ParseDuration("--warmup", value));

    public Option<string> Access { get; } = Checked(new Option<string>("--access")
    {
        Description = "Comma-separated: full, header-only", DefaultValueFactory = _ => "full",
    }, value => SplitList(value).Select(ParseAccess).ToList());

    public Option<string> Topology { get; } = Checked(new Option<string>("--topology")
    {
        Description = "all-to-all or paired", DefaultValueFactory = _ => "all-to-all",
    }, value => ParseTopology(value));

    public Option<string> Mode { get; } = Checked(new Option<string>("--mode")
    {
        Description = "stream or round-trip", DefaultValueFactory = _ => "stream",
    }, value => ParseMode(value));

    public Option<string?> Wait { get; } = Checked(new Option<string?>("--wait")
    {
        Description = "spin, yield or block (default: each transport's default)",
    }, value => ParseWait(value));

    public Option<double> Rate { get; } = NonNegative("--rate", "Messages per second per publisher; 0 = as fast as possible");

    public Option<int> SampleEvery { get; } = Whole("--latency-sample-every",
        "Measure latency for one message in N (0 = 1 for round trips and --rate runs, 64 for closed-loop streams)", 0, min: 0);

    public Option<string?> PublisherCpus { get; } = Checked(new Option<string?>("--publisher-cpus")
    {
        Description = "CPU list for the publisher threads, e.g. 0 or 2-3,6 (publisher i on the i-th CPU)",
    }, value => ParseCpus("--publisher-cpus", value));

    public Option<string?> SubscriberCpus { get; } = Checked(new Option<string?>("--subscriber-cpus")
    {
        Description = "CPU list for the subscribers' receiving threads (subscriber j on the j-th CPU)",
    }, value => ParseCpus("--subscriber-cpus", value));

    public Option<int> RealtimePriority { get; } = Whole("--realtime-priority",
        "0 = normal scheduling; 1-99 = SCHED_FIFO at that priority (needs CAP_SYS_NICE or RLIMIT_RTPRIO)", 0, min: 0,
        max: Workload.Placement.RealtimePermission.MaxPriority);

    public Option<bool> LockMemory { get; } = new("--lock-memory") { Description = "mlockall in the daemon and the agents while a scenario runs" };

    public Option<bool> FreshAgents { get; } = new("--fresh-agents")
    {
        Description = "Start new agent processes for every scenario, as cold as the first, rather than hand the last scenario's on warm",
    };

    public Option<string?> Preset { get; } = new("--preset")
    {
        Description = "A preset reproducing docs/published-figures.md §N (reference-1 .. reference-5): its matrix, and a published-vs-measured table; --duration/--warmup shorten it only when given",
    };

    public Option<string> Repetitions { get; } = Checked(new Option<string>("--repetitions")
    {
        Description = $"Rounds: every scenario runs once per round, never twice in a row (1-{Reports.RoundPlanner.MaxRepetitions}); "
            + "auto: rounds until each cell's median msg/s is within --precision",
        DefaultValueFactory = _ => "1",
    }, value => ParseRepetitions(value));

    public Option<double?> Precision { get; } = new("--precision")
    {
        Description = "With --repetitions auto: the target, in percent of a cell's median msg/s, for half its 95 % confidence interval (0-100]",
        CustomParser = result =>
        {
            var text = result.Tokens.Count > 0 ? result.Tokens[^1].Value : string.Empty;
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && value > 0 && value <= 100)
            {
                return value;
            }

            result.AddError($"--precision: '{text}' is not a number above 0 and at most 100 (percent)");
            return null;
        },
    };

    public Option<int> MaxRepetitions { get; } = Whole("--max-repetitions", "With --repetitions auto: the most rounds a cell takes",
        Reports.RoundPlanner.DefaultMaxAdaptiveRepetitions, min: Reports.RoundPlanner.MinAdaptiveRepetitions, max: Reports.RoundPlanner.MaxRepetitions);

    public Option<string?> Soak { get; } = Checked(new Option<string?>("--soak")
    {
        Description = "Run every cell at once, each its own scenario, for this long (e.g. 2h, 30m) and judge them as one soak while they run "
            + "(HOLDING, DRIFTING, LEAKING, LOSING); soak.html in --out. Ctrl+C ends it early with what was measured",
    }, value => ParseSoak(value));

    public Option<string?> Output { get; } = new("--out")
    {
        Description = "Directory for results.json, results.csv, results-series.csv, results.hlog, report.html and report.json "
            + "(default: results/<timestamp>; a relative one is taken from the current directory)",
    };

    public Option<string?> Baseline { get; } = new("--baseline") { Description = "A previous run's report.json: print and chart each cell's change against it (CompareSuites' rules, threshold 5 %)" };

    /// <summary>--daemons and its client options: `run` on a lab's daemons rather than in process.</summary>
    public LabOptions Lab { get; } = new();
    /// <summary>--rates and --find-max-rate's options.</summary>
    public OfferedLoadOptions Load { get; } = new();

    public IEnumerable<Option> All =>
    [
        Transports, Payloads, Publishers, Subscribers, Duration, Warmup, Access, Topology, Mode, Wait, Rate, SampleEvery,
        PublisherCpus, SubscriberCpus, RealtimePriority, LockMemory, FreshAgents, Preset, Repetitions, Precision, MaxRepetitions, Soak, Output, Baseline, .. Lab.All,
        .. Load.All,
    ];

    /// <summary>
    /// The option each SuiteSpec field comes from (RunSuiteSpec), so that a refusal of the planner, which names the
    /// field, reads as one about the option the user typed: spec.rates_per_publisher is --rates.
    /// </summary>
    public string Refusal(RequestRefusedException refusal) =>
        refusal.Field is { } field ? OptionOf(field) + refusal.Message[field.Length..] : refusal.Message;

    public string OptionOf(string field) => field switch
    {
        "spec.transports" => Transports.Name,
        "spec.payload_bytes" => Payloads.Name,
        "spec.topologies" => $"{this.Publishers.Name}/{this.Subscribers.Name}/{this.Topology.Name}",
        "spec.payload_access" => Access.Name,
        "spec.wait_strategies" => Wait.Name,
        "spec.modes" => Mode.Name,
        "spec.duration" => $"{Duration.Name} (or {Soak.Name})",
        "spec.warmup" => Warmup.Name,
        "spec.rate_per_publisher" => Rate.Name,
        "spec.rates_per_publisher" => Load.Rates.Name,
        "spec.rate_search" => Load.FindMaxRate.Name,
        "spec.rate_search.max_p99_latency" => Load.MaxP99.Name,
        "spec.rate_search.min_delivered_ratio" => Load.MinDelivered.Name,
        "spec.rate_search.max_steps" => Load.MaxSteps.Name,
        "spec.latency_sample_every" => SampleEvery.Name,
        "spec.publisher_cpus" => PublisherCpus.Name,
        "spec.subscriber_cpus" => SubscriberCpus.Name,
        "spec.realtime_priority" => RealtimePriority.Name,
        "spec.lock_memory" => LockMemory.Name,
        "spec.preset" => Preset.Name,
        "spec.repetitions" => Repetitions.Name,
        "spec.target_precision_percent" => Precision.Name,
        "spec.max_repetitions" => MaxRepetitions.Name,
        _ => field,
    };

    /// <summary>
    /// The adaptive options go together: auto needs its target, and a target or a bound without auto would be ignored,
    /// which a user would not notice. Checked as --repetitions' validator (it always has a value, given or the default)
    /// rather than the command's, which would hide the options' own errors until it passes.
    /// </summary>
    public RunOptions()
    {
        Repetitions.Validators.Add(CheckCombination);
        Soak.Validators.Add(CheckSoak);
    }

    /// <summary>A soak runs every cell once, side by side, for its own length: what would plan rounds, searches or a suite is refused.</summary>
    private void CheckSoak(OptionResult result)
    {
        if (result.Implicit)
        {
            return;
        }

        foreach (var (option, why) in new (Option, string)[]
        {
            (Duration, "--soak is the soak's length"), (Repetitions, "a soak runs each cell once, side by side"), (Preset, "a preset is a suite of short cells"),
            (Baseline, "compare soaks by their pages"), (Load.FindMaxRate, "find the rate first, then soak at a share of it with --rate"),
            (Load.Rates, "give one --rate"), (Lab.Daemons, "start the soak's scenarios on a daemon with StartScenario"),
            (Lab.DaemonsFile, "start the soak's scenarios on a daemon with StartScenario"),
        })
        {
            if (result.GetResult(option) is { Implicit: false })
            {
                result.AddError($"{option.Name}: not with --soak ({why})");
            }
        }
    }

    private static TimeSpan? ParseSoak(string? value) => value is null ? null
        : ParseDuration("--soak", value) is { } soak && soak > TimeSpan.Zero ? soak
        : throw new ArgumentException($"--soak: '{value}' is not a length above zero, e.g. 2h, 30m");

    private void CheckCombination(OptionResult result)
    {
        bool auto = IsAuto(result.GetValueOrDefault<string>());
        bool precision = result.GetResult(Precision) is { Implicit: false };
        if (auto && !precision)
        {
            result.AddError("--repetitions auto needs --precision, the target in percent, e.g. --precision 2");
        }
        else if (!auto && precision)
        {
            result.AddError("--precision: only with --repetitions auto (it is the target adaptive repetitions stop at)");
        }
        else if (!auto && result.GetResult(MaxRepetitions) is { Implicit: false })
        {
            result.AddError("--max-repetitions: only with --repetitions auto (it bounds adaptive repetitions)");
        }
    }

    /// <summary>The parsed options; only --baseline (a file to read) can still fail, with an ArgumentException naming it.</summary>
    public RunSettings Read(ParseResult result) =>
        new(
            SplitList(result.GetValue(Transports)),
            ParsePayloads(result.GetValue(Payloads)!),
            result.GetValue(Publishers),
            result.GetValue(Subscribers),
            ParseDuration("--duration", result.GetValue(Duration)!),
            ParseDuration("--warmup", result.GetValue(Warmup)!),
            SplitList(result.GetValue(Access)).Select(ParseAccess).ToList(),
            ParseTopology(result.GetValue(Topology)!),
            ParseMode(result.GetValue(Mode)!),
            ParseWait(result.GetValue(Wait)),
            result.GetValue(Rate),
            result.GetValue(SampleEvery),
            new RunPlacement(
                ParseCpus("--publisher-cpus", result.GetValue(PublisherCpus)),
                ParseCpus("--subscriber-cpus", result.GetValue(SubscriberCpus)),
                result.GetValue(RealtimePriority),
                result.GetValue(LockMemory)),
            // Absolute from here on: relative to the directory the command was run in, and printed as such.
            Path.GetFullPath(result.GetValue(Output) ?? Path.Combine("results", DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture))))
        {
            Preset = result.GetValue(Preset),
            FreshAgents = result.GetValue(FreshAgents),
            SoakDuration = ParseSoak(result.GetValue(Soak)),
            Repetitions = ParseRepetitions(result.GetValue(Repetitions)!),
            TargetPrecisionPercent = IsAuto(result.GetValue(Repetitions)) ? result.GetValue(Precision) : null,
            MaxRepetitions = result.GetValue(MaxRepetitions),
            // A preset keeps its own duration and warmup unless they are given.
            DurationGiven = result.GetResult(Duration) is { Implicit: false },
            WarmupGiven = result.GetResult(Warmup) is { Implicit: false },
            Baseline = LocalSuite.ReadBaseline(result.GetValue(Baseline)),
            Lab = Lab.Read(result),
            Load = Load.Read(result, result.GetValue(Rate), ParseRepetitions(result.GetValue(Repetitions)!), result.GetValue(SampleEvery)),
        };

    public static TimeSpan ParseDuration(string option, string value)
    {
        value = value.Trim();
        (string number, double scale) = value switch
        {
            _ when value.EndsWith("ms", StringComparison.Ordinal) => (value[..^2], 0.001),
            _ when value.EndsWith('s') => (value[..^1], 1),
            _ when value.EndsWith('m') => (value[..^1], 60),
            _ when value.EndsWith('h') => (value[..^1], 3600),
            _ => (value, 1),
        };
        return double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out var parsed) && parsed >= 0
            ? TimeSpan.FromSeconds(parsed * scale)
            : throw new ArgumentException($"{option}: '{value}' is not a duration like 10s, 500ms, 2m or 1h");
    }

    /// <summary>A number of rounds, or 0 for auto (adaptive: SuiteSpec's repetitions 0 with a target).</summary>
    private static int ParseRepetitions(string value) =>
        IsAuto(value) ? 0
        : int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var parsed) && parsed >= 1 && parsed <= Reports.RoundPlanner.MaxRepetitions
            ? parsed
            : throw new ArgumentException($"--repetitions: '{value}' is not a whole number from 1 to {Reports.RoundPlanner.MaxRepetitions}, or auto");

    private static bool IsAuto(string? value) => string.Equals(value, "auto", StringComparison.OrdinalIgnoreCase);

    /// <summary>Runs <paramref name="parse"/> on the option's value while parsing; its ArgumentException becomes the parse error.</summary>
    internal static Option<T> Checked<T>(Option<T> option, Action<T> parse)
    {
        option.Validators.Add(result =>
        {
            try
            {
                parse(result.GetValueOrDefault<T>());
            }
            catch (ArgumentException e)
            {
                result.AddError(e.Message);
            }
        });
        return option;
    }

    private static Option<int> Whole(string name, string description, int defaultValue, int min, int max = int.MaxValue)
    {
        var range = max == int.MaxValue ? $"a whole number of at least {min}" : $"a whole number from {min} to {max}";
        return new Option<int>(name)
        {
            Description = description,
            DefaultValueFactory = _ => defaultValue,
            CustomParser = result =>
            {
                var text = result.Tokens.Count > 0 ? result.Tokens[^1].Value : string.Empty;
                if (int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value >= min && value <= max)
                {
                    return value;
                }

                result.AddError($"{name}: '{text}' is not {range}");
                return defaultValue;
            },
        };
    }

    private static Option<double> NonNegative(string name, string description) => new(name)
    {
        Description = description,
        DefaultValueFactory = _ => 0,
        CustomParser = result =>
        {
            var text = result.Tokens.Count > 0 ? result.Tokens[^1].Value : string.Empty;
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && double.IsFinite(value) && value >= 0)
            {
                return value;
            }

            result.AddError($"{name}: '{text}' is not a number of at least 0");
            return 0;
        },
    };

    private static List<string> SplitList(string? value) =>
        string.IsNullOrWhiteSpace(value) ? [] : [.. value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)];

    private static List<int> ParsePayloads(string value)
    {
        var payloads = SplitList(value).Select(p => int.TryParse(p, NumberStyles.Integer, CultureInfo.InvariantCulture, out var parsed) && parsed > 0
            ? parsed
            : throw new ArgumentException($"--payloads: '{p}' is not a positive whole number of bytes")).ToList();
        return payloads.Count > 0 ? payloads : throw new ArgumentException("--payloads: give at least one size in bytes, e.g. 8,1024");
    }

    private static PayloadAccess ParseAccess(string value) => value.ToLowerInvariant() switch
    {
        "full" => PayloadAccess.Full,
        "header-only" or "header_only" or "header" => PayloadAccess.HeaderOnly,
        _ => throw new ArgumentException($"--access: '{value}' is not one of full, header-only"),
    };

    private static V1.Topology ParseTopology(string value) => value.ToLowerInvariant() switch
    {
        "all-to-all" or "all_to_all" => V1.Topology.AllToAll,
        "paired" => V1.Topology.Paired,
        _ => throw new ArgumentException($"--topology: '{value}' is not one of all-to-all, paired"),
    };

    private static V1.Mode ParseMode(string value) => value.ToLowerInvariant() switch
    {
        "stream" => V1.Mode.Stream,
        "round-trip" or "round_trip" => V1.Mode.RoundTrip,
        _ => throw new ArgumentException($"--mode: '{value}' is not one of stream, round-trip"),
    };

    private static WaitMode? ParseWait(string? value) => value?.ToLowerInvariant() switch
    {
        null => null,
        "spin" => WaitMode.Spin,
        "yield" => WaitMode.Yield,
        "block" => WaitMode.Block,
        _ => throw new ArgumentException($"--wait: '{value}' is not one of spin, yield, block"),
    };

    /// <summary>The syntax is checked here, to name the option; whether the CPUs may be used, by the daemon's validator.</summary>
    private static string ParseCpus(string option, string? value)
    {
        try
        {
            return Workload.Placement.CpuSet.Parse(value ?? string.Empty).ToString();
        }
        catch (FormatException e)
        {
            throw new ArgumentException($"{option}: {e.Message}");
        }
    }
}

internal sealed record RunSettings(
    IReadOnlyList<string> Transports,
    IReadOnlyList<int> Payloads,
    int Publishers,
    int Subscribers,
    TimeSpan Duration,
    TimeSpan Warmup,
    IReadOnlyList<PayloadAccess> Access,
    Topology Topology,
    Mode Mode,
    WaitMode? Wait,
    double Rate,
    int LatencySampleEvery,
    RunPlacement Placement,
    string OutputDirectory)
{
    public string? Preset { get; init; }

    /// <summary>--fresh-agents: the in-process daemon keeps no agent warm (IpcBench:WarmAgentIdleSeconds=0).</summary>
    public bool FreshAgents { get; init; }

    /// <summary>--soak: every cell at once for this long, judged as one soak; null for a matrix.</summary>
    public TimeSpan? SoakDuration { get; init; }

    /// <summary>Fixed rounds; 0 for --repetitions auto.</summary>
    public int Repetitions { get; init; } = 1;

    /// <summary>--precision with --repetitions auto; null for fixed repetitions.</summary>
    public double? TargetPrecisionPercent { get; init; }

    /// <summary>--max-repetitions: adaptive repetitions' bound.</summary>
    public int MaxRepetitions { get; init; } = Reports.RoundPlanner.DefaultMaxAdaptiveRepetitions;

    public bool DurationGiven { get; init; }

    public bool WarmupGiven { get; init; }

    /// <summary>A previous run's report (--baseline) to compare this one against.</summary>
    public Reports.SuiteReport? Baseline { get; init; }

    /// <summary>--daemons: the daemons to run the suite on; null runs it in process.</summary>
    public LabSettings? Lab { get; init; }
    /// <summary>--rates, or --find-max-rate's search.</summary>
    public OfferedLoad? Load { get; init; }
}

internal sealed record RunPlacement(string PublisherCpus, string SubscriberCpus, int RealtimePriority, bool LockMemory);
