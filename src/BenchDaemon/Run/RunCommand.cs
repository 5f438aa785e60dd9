using System.CommandLine;
using System.Globalization;
using Google.Protobuf;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;
using IpcBench.V1;
using Serilog;
using Serilog.Events;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `BenchDaemon run`: the benchmark matrix through the same engine the daemon runs (agents and all), printed as
/// Markdown tables, with results.json, results.csv, results-series.csv and results.hlog (every scenario's latency per
/// second, an HdrHistogram log tagged by scenario id) written as ExportScenarios writes them. The
/// scenarios also go to the scenario database, so a serving daemon on the same IpcBench:DatabasePath can list and
/// compare them. No control port is opened, so it runs beside a serving daemon.
/// </summary>
public static class RunCommand
{
    public static Command Create()
    {
        var transports = new Option<string?>("--transports") { Description = "Comma-separated transport ids (default: every available one)" };
        var payloads = new Option<string>("--payloads") { Description = "Comma-separated payload sizes in bytes", DefaultValueFactory = _ => "8,1024,65536,524288" };
        var publishers = new Option<int>("--publishers") { Description = "Publishers per scenario (N)", DefaultValueFactory = _ => 1 };
        var subscribers = new Option<int>("--subscribers") { Description = "Subscribers per scenario (M)", DefaultValueFactory = _ => 1 };
        var duration = new Option<string>("--duration") { Description = "Measured time per scenario, e.g. 10s, 500ms, 2m", DefaultValueFactory = _ => "2s" };
        var warmup = new Option<string>("--warmup") { Description = "Warmup per scenario", DefaultValueFactory = _ => "500ms" };
        var access = new Option<string>("--access") { Description = "Comma-separated: full, header-only", DefaultValueFactory = _ => "full" };
        var topology = new Option<string>("--topology") { Description = "all-to-all or paired", DefaultValueFactory = _ => "all-to-all" };
        var mode = new Option<string>("--mode") { Description = "stream or round-trip", DefaultValueFactory = _ => "stream" };
        var wait = new Option<string?>("--wait") { Description = "spin, yield or block (default: each transport's default)" };
        var rate = new Option<double>("--rate") { Description = "Messages per second per publisher; 0 = as fast as possible", DefaultValueFactory = _ => 0 };
        var sampleEvery = new Option<int>("--latency-sample-every")
        {
            Description = "Measure latency for one message in N (0 = 1 for round trips and --rate runs, 64 for closed-loop streams)",
            DefaultValueFactory = _ => 0,
        };
        var publisherCpus = new Option<string?>("--publisher-cpus") { Description = "CPU list for the publisher threads, e.g. 0 or 2-3,6 (publisher i on the i-th CPU)" };
        var subscriberCpus = new Option<string?>("--subscriber-cpus") { Description = "CPU list for the subscribers' receiving threads (subscriber j on the j-th CPU)" };
        var realtimePriority = new Option<int>("--realtime-priority")
        {
            Description = "0 = normal scheduling; 1-99 = SCHED_FIFO at that priority (needs CAP_SYS_NICE or RLIMIT_RTPRIO)",
            DefaultValueFactory = _ => 0,
        };
        var lockMemory = new Option<bool>("--lock-memory") { Description = "mlockall in the daemon and the agents while a scenario runs" };
        var preset = new Option<string?>("--preset") { Description = "A preset reproducing docs/published-figures.md §N (reference-1 .. reference-5): its matrix, and a published-vs-measured table; --duration/--warmup shorten it only when given" };
        var repetitions = new Option<int>("--repetitions") { Description = "Rounds: every scenario runs once per round, never twice in a row (1-100)", DefaultValueFactory = _ => 1 };
        var output = new Option<string?>("--out")
        {
            Description = "Directory for results.json, results.csv, results-series.csv, results.hlog, report.html and report.json (default: results/<timestamp>)",
        };
        var baseline = new Option<string?>("--baseline") { Description = "A previous run's report.json: print and chart each cell's change against it (CompareSuites' rules, threshold 5 %)" };
        var command = new Command("run", "Run a benchmark matrix once and print the results (about a minute with no options)")
        {
            transports, payloads, publishers, subscribers, duration, warmup, access, topology, mode, wait, rate, sampleEvery,
            publisherCpus, subscriberCpus, realtimePriority, lockMemory, preset, repetitions, output, baseline,
        };
        command.SetAction((result, token) =>
        {
            RunSettings settings;
            try
            {
                settings = new RunSettings(
                    SplitList(result.GetValue(transports)),
                    SplitList(result.GetValue(payloads)).Select(p => ParseInt("--payloads", p)).ToList(),
                    result.GetValue(publishers),
                    result.GetValue(subscribers),
                    ParseDuration("--duration", result.GetValue(duration)!),
                    ParseDuration("--warmup", result.GetValue(warmup)!),
                    SplitList(result.GetValue(access)).Select(ParseAccess).ToList(),
                    ParseTopology(result.GetValue(topology)!),
                    ParseMode(result.GetValue(mode)!),
                    ParseWait(result.GetValue(wait)),
                    result.GetValue(rate),
                    result.GetValue(sampleEvery),
                    new RunPlacement(
                        ParseCpus("--publisher-cpus", result.GetValue(publisherCpus)),
                        ParseCpus("--subscriber-cpus", result.GetValue(subscriberCpus)),
                        ParsePriority(result.GetValue(realtimePriority)),
                        result.GetValue(lockMemory)),
                    result.GetValue(output) ?? Path.Combine("results", DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture)))
                {
                    Preset = result.GetValue(preset),
                    Repetitions = result.GetValue(repetitions),
                    // A preset keeps its own duration and warmup unless they are given.
                    DurationGiven = result.GetResult(duration) is { Implicit: false },
                    WarmupGiven = result.GetResult(warmup) is { Implicit: false },
                    Baseline = LocalSuite.ReadBaseline(result.GetValue(baseline)),
                };
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return Task.FromResult(2);
            }

            return ExecuteAsync(settings, [.. result.UnmatchedTokens], token);
        });
        command.TreatUnmatchedTokensAsErrors = false;
        return command;
    }

    private static async Task<int> ExecuteAsync(RunSettings settings, string[] configurationArguments, CancellationToken cancellationToken)
    {
        Logging.Configure(LogEventLevel.Warning);
        WebApplication? app = null;
        try
        {
            app = DaemonHost.Build(configurationArguments, options =>
            {
                // Runs beside a serving daemon: neither the control port nor the metrics port.
                options.ControlAddress = string.Empty;
                options.MetricsAddress = string.Empty;
            });
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
            return await RunMatrixAsync(app.Services, settings, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (DaemonHost.IsConfigurationError(e))
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 2;
        }
        finally
        {
            if (app is not null)
            {
                await app.StopAsync(CancellationToken.None).ConfigureAwait(false);
                await app.DisposeAsync().ConfigureAwait(false);
            }

            await Log.CloseAndFlushAsync().ConfigureAwait(false);
        }
    }

    private static async Task<int> RunMatrixAsync(IServiceProvider services, RunSettings settings, CancellationToken cancellationToken)
    {
        SuitePlan plan;
        try
        {
            plan = Plan(services, settings);
        }
        catch (RequestRefusedException e)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 2;
        }

        if (plan.Cells.Count == 0)
        {
            Console.Error.WriteLine("error: no transport to run");
            return 2;
        }

        Directory.CreateDirectory(settings.OutputDirectory);
        var first = plan.Cells[0];
        int total = plan.Cells.Count * plan.Repetitions;
        Console.Error.WriteLine($"Running {total} scenarios of {first.Duration!.Value.TotalSeconds:0.###} s (+{first.Warmup.TotalSeconds:0.###} s warmup)" +
            (plan.Repetitions > 1 ? $" in {plan.Repetitions} interleaved rounds" : string.Empty) + $"; results in {settings.OutputDirectory}");

        var results = new List<Scenario>();
        var suite = await MatrixProgress.RunAsync(
            ProgressDisplay.LiveConsole(Console.IsErrorRedirected, Console.Error, ProcessEnvironment()), total, first.Warmup + first.Duration.Value,
            progress => LocalSuite.RunAsync(services, plan, settings.OutputDirectory, results, progress, cancellationToken)).ConfigureAwait(false);
        if (suite.State == SuiteRunState.Failed)
        {
            Console.Error.WriteLine($"error: {suite.Error}");
            return 2;
        }

        Console.Out.Write(ResultTables.Render(results));
        var (report, comparison) = await LocalSuite.ReportAsync(services, suite, settings.OutputDirectory, settings.Baseline).ConfigureAwait(false);
        if (plan.Preset.Length > 0 || plan.Repetitions > 1)
        {
            // Medians with min–max per cell, and for a preset the published-vs-measured table.
            Console.Out.WriteLine();
            Console.Out.Write(Reports.MarkdownReport.Render(report));
        }

        if (comparison is not null)
        {
            Console.Out.WriteLine();
            Console.Out.Write(Reports.MarkdownReport.ComparisonSection(comparison));
        }

        return results.Any(r => r.State == ScenarioState.Failed) ? 1 : 0;
    }

    /// <summary>The options as a suite: a preset through the suite planner, else today's matrix, each cell validated as StartScenario would.</summary>
    private static SuitePlan Plan(IServiceProvider services, RunSettings settings)
    {
        if (settings.Preset is { } preset)
        {
            // The placement options apply to every preset cell, as to every cell of run's own matrix (BuildSpec).
            var spec = new SuiteSpec
            {
                Preset = preset,
                Repetitions = settings.Repetitions,
                // The report's title: which command made it.
                Name = $"run --preset {preset}",
                PublisherCpus = settings.Placement.PublisherCpus,
                SubscriberCpus = settings.Placement.SubscriberCpus,
                RealtimePriority = settings.Placement.RealtimePriority,
                LockMemory = settings.Placement.LockMemory,
            };
            spec.Duration = settings.DurationGiven ? Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(settings.Duration) : null;
            spec.Warmup = settings.WarmupGiven ? Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(settings.Warmup) : null;
            return services.GetRequiredService<SuitePlanner>().Plan(spec);
        }

        if (settings.Repetitions is < 1 or > Reports.RoundPlanner.MaxRepetitions)
        {
            throw new RequestRefusedException(RefusalKind.InvalidArgument, "--repetitions", $"must be 1..{Reports.RoundPlanner.MaxRepetitions}; got {settings.Repetitions}");
        }

        var registry = services.GetRequiredService<TransportRegistry>();
        var transports = SelectTransports(registry, settings.Transports, services.GetRequiredService<Agents.AgentLauncher>());
        var validator = services.GetRequiredService<SpecValidator>();
        var cells = (
            from transport in transports
            from access in settings.Access
            from payload in settings.Payloads
            select validator.Resolve(BuildSpec(settings, transport, access, payload))).ToList();
        return new SuitePlan("run", string.Empty, settings.Repetitions, cells);
    }

    private static Dictionary<string, string> ProcessEnvironment() =>
        Environment.GetEnvironmentVariables().Cast<System.Collections.DictionaryEntry>()
            .ToDictionary(e => (string)e.Key, e => e.Value as string ?? string.Empty, StringComparer.Ordinal);

    internal static async Task WriteResultsAsync(string directory, IReadOnlyList<ScenarioResult> records, ScenarioCatalog catalog)
    {
        var hdrLog = ScenarioExporter.HdrLog([.. records.Select(r => (r.Scenario.Id, catalog.LatencyIntervals(r.Scenario.Id)))]);
        await File.WriteAllTextAsync(Path.Combine(directory, "results.hlog"), hdrLog).ConfigureAwait(false);
        await File.WriteAllTextAsync(Path.Combine(directory, "results.json"), ScenarioExporter.Json(records, DateTime.UtcNow)).ConfigureAwait(false);
        await File.WriteAllTextAsync(Path.Combine(directory, "results.csv"), ScenarioExporter.SummaryCsv(records)).ConfigureAwait(false);
        await File.WriteAllTextAsync(Path.Combine(directory, "results-series.csv"), ScenarioExporter.SeriesCsv(records)).ConfigureAwait(false);
    }

    private static List<ITransport> SelectTransports(TransportRegistry registry, IReadOnlyList<string> requested, Agents.AgentLauncher launcher)
    {
        var selected = new List<ITransport>();
        foreach (var id in requested.Count > 0 ? requested : registry.All.Select(t => t.Id))
        {
            var transport = registry.Find(id)
                ?? throw new ArgumentException($"--transports: '{id}' is not a transport; one of: {string.Join(", ", registry.All.Select(t => t.Id))}");
            var reason = transport.UnavailableReason ?? (transport.Capabilities.CrossProcess ? launcher.UnavailableReason : null);
            if (reason is not null)
            {
                Console.Error.WriteLine($"skipping {transport.Id}: {reason}");
                continue;
            }

            selected.Add(transport);
        }

        return selected;
    }

    private static ScenarioSpec BuildSpec(RunSettings settings, ITransport transport, PayloadAccess access, int payload)
    {
        var spec = new ScenarioSpec
        {
            Transport = transport.Id,
            Publishers = settings.Publishers,
            Subscribers = settings.Subscribers,
            PayloadBytes = payload,
            Duration = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(settings.Duration),
            Warmup = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(settings.Warmup),
            RatePerPublisher = settings.Rate,
            LatencySampleEvery = settings.LatencySampleEvery,
            Topology = settings.Topology,
            PayloadAccess = access,
            Mode = settings.Mode,
            Name = "run",
            PublisherCpus = settings.Placement.PublisherCpus,
            SubscriberCpus = settings.Placement.SubscriberCpus,
            RealtimePriority = settings.Placement.RealtimePriority,
            LockMemory = settings.Placement.LockMemory,
        };
        if (settings.Wait is { } wait && transport.Capabilities.WaitModes.Contains(wait))
        {
            spec.WaitStrategy = Workload.WaitStrategies.ToProto(wait);
        }

        return spec;
    }

    private static List<string> SplitList(string? value) =>
        string.IsNullOrWhiteSpace(value) ? [] : [.. value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)];

    private static int ParseInt(string option, string value) =>
        int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var parsed) && parsed > 0
            ? parsed
            : throw new ArgumentException($"{option}: '{value}' is not a positive whole number");

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

    private static PayloadAccess ParseAccess(string value) => value.ToLowerInvariant() switch
    {
        "full" => PayloadAccess.Full,
        "header-only" or "header_only" or "header" => PayloadAccess.HeaderOnly,
        _ => throw new ArgumentException($"--access: '{value}' is not one of full, header-only"),
    };

    private static Topology ParseTopology(string value) => value.ToLowerInvariant() switch
    {
        "all-to-all" or "all_to_all" => Topology.AllToAll,
        "paired" => Topology.Paired,
        _ => throw new ArgumentException($"--topology: '{value}' is not one of all-to-all, paired"),
    };

    private static Mode ParseMode(string value) => value.ToLowerInvariant() switch
    {
        "stream" => Mode.Stream,
        "round-trip" or "round_trip" => Mode.RoundTrip,
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

    private static int ParsePriority(int value) => value is >= 0 and <= Workload.Placement.RealtimePermission.MaxPriority
        ? value
        : throw new ArgumentException($"--realtime-priority: must be 0 (normal scheduling) to {Workload.Placement.RealtimePermission.MaxPriority} (SCHED_FIFO); got {value}");

    public static string AccessName(PayloadAccess access) => access == PayloadAccess.HeaderOnly ? "header-only" : "full";

    private sealed record RunSettings(
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

        public int Repetitions { get; init; } = 1;

        public bool DurationGiven { get; init; }

        public bool WarmupGiven { get; init; }

        /// <summary>A previous run's report (--baseline) to compare this one against.</summary>
        public Reports.SuiteReport? Baseline { get; init; }
    }

    private sealed record RunPlacement(string PublisherCpus, string SubscriberCpus, int RealtimePriority, bool LockMemory);
}
