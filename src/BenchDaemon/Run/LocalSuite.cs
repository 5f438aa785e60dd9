using IpcBench.Daemon.Control;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Reports;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Schema;
using IpcBench.V1;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run` as a client of the suite engine, in process: the matrix (or preset) is one suite, run by the same SuiteManager
/// StartSuite uses, interleaved rounds and all; this only follows it, shows progress and writes the files.
/// </summary>
internal static class LocalSuite
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(500);

    /// <summary>Runs <paramref name="plan"/> to its end (Ctrl+C stops it); its scenarios in run order go to <paramref name="results"/>.</summary>
    public static async Task<SuiteSnapshot> RunAsync(
        IServiceProvider services, SuitePlan plan, string outputDirectory, List<Scenario> results, IMatrixProgress progress, CancellationToken cancellationToken)
    {
        var suites = services.GetRequiredService<SuiteManager>();
        var store = services.GetRequiredService<StoreWriter>();
        var catalog = services.GetRequiredService<ScenarioCatalog>();
        var suite = suites.Start(plan);
        var records = new List<ScenarioResult>();
        var recorded = new HashSet<string>(StringComparer.Ordinal);
        while (true)
        {
            await Task.WhenAny(suite.Completion, suite.Changed, Task.Delay(Tick, CancellationToken.None)).ConfigureAwait(false);
            if (cancellationToken.IsCancellationRequested)
            {
                suite.RequestStop();
            }

            var snapshot = suite.Snapshot();
            var finished = Finished(snapshot).Where(recorded.Add).ToList();
            if (finished.Count > 0)
            {
                // The series comes from the database, as ExportSuite reads it: wait until these scenarios' points are in.
                await store.FlushAsync(CancellationToken.None).ConfigureAwait(false);
                foreach (var id in finished)
                {
                    var scenario = catalog.Get(id);
                    results.Add(ScenarioProtos.ToProto(scenario));
                    // Its final state on the progress line too (COMPLETED, FAILED ...), as before the next one starts.
                    progress.Update(results.Count, snapshot.ScenariosTotal, results[^1]);
                    records.Add(catalog.Record(scenario));
                }

                // Rewritten after every scenario: an interrupted matrix still leaves the results of those that ran.
                await LocalRun.WriteResultsAsync(outputDirectory, records, catalog).ConfigureAwait(false);
            }

            if (suite.Running is { } running)
            {
                progress.Update(results.Count + 1, snapshot.ScenariosTotal, ScenarioProtos.ToProto(running.Snapshot()));
            }

            if (suite.Completion.IsCompleted && Finished(suite.Snapshot()).All(recorded.Contains))
            {
                return suite.Snapshot();
            }
        }
    }

    /// <summary>
    /// The report of a finished suite (with its published-vs-measured table for a preset), and report.html and
    /// report.json beside the results; against a baseline (`--baseline`), report.html carries the comparison too.
    /// </summary>
    public static async Task<(SuiteReport Report, SuiteComparison? Comparison)> ReportAsync(IServiceProvider services, SuiteSnapshot suite, string outputDirectory,
        SuiteReport? baseline)
    {
        var report = services.GetRequiredService<SuiteReports>().Build(suite);
        var comparison = baseline is null ? null : SuiteComparison.Compare(baseline, report, ScenarioComparer.DefaultThresholdPercent);
        await File.WriteAllTextAsync(Path.Combine(outputDirectory, "report.html"), HtmlReport.Render(report, comparison)).ConfigureAwait(false);
        // Without the comparison: it is the file a later run compares against.
        await File.WriteAllTextAsync(Path.Combine(outputDirectory, "report.json"), JsonReport.Render(report)).ConfigureAwait(false);
        return (report, comparison);
    }

    /// <summary>--baseline, read before anything runs: a wrong path fails in a second rather than after the matrix.</summary>
    public static SuiteReport? ReadBaseline(string? path) => path is null ? null : ReportFile.Load("--baseline", path);

    /// <summary>
    /// Finished scenarios in the order they ran (round by round, a round's noise-retried attempts first), the running one
    /// left out. The rounds are those taken so far, so an adaptive suite's cells that stopped early simply have no more; a
    /// rate search's probes follow their cell's closed-loop round.
    /// </summary>
    private static IEnumerable<string> Finished(SuiteSnapshot suite) =>
        RoundPlanner.Plan(Math.Max(1, suite.Cells.Count), Math.Max(1, suite.Cells.Select(c => c.ScenarioIds.Count).DefaultIfEmpty(0).Max()))
            .Where(step => step.Cell < suite.Cells.Count && suite.Cells[step.Cell].ScenarioIds.Count >= step.Round)
            .SelectMany(step => suite.Cells[step.Cell].NoisyAttempts.Where(a => a.Round == step.Round && a.Retried).Select(a => a.ScenarioId)
                .Append(suite.Cells[step.Cell].ScenarioIds[step.Round - 1])
                .Concat(step.Round == 1 ? suite.Cells[step.Cell].Probes.Select(p => p.ScenarioId) : []))
            .Where(id => id != suite.RunningScenarioId);
}
