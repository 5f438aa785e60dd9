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
/// `BenchDaemon run` in process: the benchmark matrix through the same engine the daemon runs (agents and all), printed as
/// Markdown tables, with results.json, results.csv, results-series.csv and results.hlog (every scenario's latency per
/// second, an HdrHistogram log tagged by scenario id) written as ExportScenarios writes them. The
/// scenarios also go to the scenario database, so a serving daemon on the same IpcBench:DatabasePath can list and
/// compare them. No control port is opened, so it runs beside a serving daemon.
/// </summary>
internal static class LocalRun
{
    public static async Task<int> ExecuteAsync(RunSettings settings, string[] configurationArguments, Func<RequestRefusedException, string> refusal, CancellationToken cancellationToken)
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
                if (settings.FreshAgents)
                {
                    options.WarmAgentIdleSeconds = 0;
                }
            });
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
            return await RunMatrixAsync(app.Services, settings, refusal, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (DaemonHost.IsConfigurationError(e))
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return ExitCodes.Usage;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // Interrupted while the host was starting; DaemonCommandLine turns it into the signal's exit code.
            return ExitCodes.Interrupted;
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

    /// <param name="refusal">A refusal of the planner under the option's name (RunOptions.Refusal).</param>
    private static async Task<int> RunMatrixAsync(IServiceProvider services, RunSettings settings, Func<RequestRefusedException, string> refusal, CancellationToken cancellationToken)
    {
        SuitePlan plan;
        try
        {
            plan = Plan(services, settings);
        }
        catch (RequestRefusedException e)
        {
            // The planner's rule, under the option's name: "--rates: [1] repeats 100: ...", not "spec.rates_per_publisher: ...".
            Console.Error.WriteLine($"error: {refusal(e)}");
            return ExitCodes.Usage;
        }

        if (plan.Cells.Count == 0)
        {
            Console.Error.WriteLine("error: no transport to run");
            return ExitCodes.Usage;
        }

        if (settings.SoakDuration is not null)
        {
            return await SoakRun.RunAsync(services, plan, settings, cancellationToken).ConfigureAwait(false);
        }

        Directory.CreateDirectory(settings.OutputDirectory);
        var first = plan.Cells[0];
        int total = plan.MaxScenarios;
        string rounds = plan.Adaptive is { } adaptive
            ? $" in interleaved rounds until each cell's median msg/s is within ±{adaptive.PrecisionPercent:0.###} % " +
              $"({Reports.RoundPlanner.MinAdaptiveRepetitions}-{adaptive.MaxRepetitions} rounds)"
            : plan.Repetitions > 1 ? $" in {plan.Repetitions} interleaved rounds" : string.Empty;
        Console.Error.WriteLine($"Running {(plan.Adaptive is null && plan.Search is null ? string.Empty : "at most ")}{total} scenarios of {first.Duration!.Value.TotalSeconds:0.###} s " +
            $"(+{first.Warmup.TotalSeconds:0.###} s warmup){rounds}; results in {settings.OutputDirectory}");

        var results = new List<Scenario>();
        var suite = await MatrixProgress.RunAsync(
            ProgressDisplay.LiveConsole(Console.IsErrorRedirected, Console.Error, ProcessEnvironment()), total, first.Warmup + first.Duration.Value,
            progress => LocalSuite.RunAsync(services, plan, settings.OutputDirectory, results, progress, cancellationToken)).ConfigureAwait(false);
        if (suite.State == SuiteRunState.Failed)
        {
            // The engine refused or lost a cell (not the options: they were checked before it started).
            Console.Error.WriteLine($"error: {suite.Error}");
            return ExitCodes.Failed;
        }

        Console.Out.Write(ResultTables.Render(results));
        var (report, comparison) = await LocalSuite.ReportAsync(services, suite, settings.OutputDirectory, settings.Baseline).ConfigureAwait(false);
        if (plan.Preset.Length > 0 || plan.Repetitions > 1 || plan.Adaptive is not null || plan.Search is not null || settings.Load?.Rates.Count > 1)
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

        return results.Any(r => r.State == ScenarioState.Failed) ? ExitCodes.Failed : ExitCodes.Ok;
    }

    /// <summary>
    /// The options as the suite `run --daemons` would send (RunSuiteSpec), planned here by the planner StartSuite uses:
    /// the transports this machine lacks skipped, saying why, and a wait applied where a transport offers it.
    /// </summary>
    private static SuitePlan Plan(IServiceProvider services, RunSettings settings)
    {
        var registry = services.GetRequiredService<TransportRegistry>();
        var requested = settings.Preset is { } preset
            ? services.GetRequiredService<Reports.PresetCatalog>().Find(preset)?.Cells.Select(c => c.Key.Transport).Distinct().ToList() ?? []
            : settings.Transports;
        var runsHere = SelectTransports(registry, requested, services.GetRequiredService<Agents.AgentLauncher>())
            .Select(t => t.Id).ToHashSet(StringComparer.Ordinal);
        return services.GetRequiredService<SuitePlanner>().Plan(RunSuiteSpec.From(settings, RunSuiteSpec.Local), runsHere.Contains);
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
}
