using System.Globalization;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run --soak 2h`: every cell of the matrix started at once, each its own scenario through the engine StartScenario
/// uses, judged while it runs (SoakJudge); a line per scenario every report interval, and at the end the results
/// files and soak.html (the page EXPORT_FORMAT_SOAK_HTML gives). Ctrl+C stops them all and keeps what was measured.
/// </summary>
internal static class SoakRun
{
    private static readonly TimeSpan ReportEvery = TimeSpan.FromMinutes(1);

    public static async Task<int> RunAsync(IServiceProvider services, SuitePlan plan, RunSettings settings, CancellationToken cancellationToken)
    {
        var manager = services.GetRequiredService<ScenarioManager>();
        var runs = new List<ScenarioRun>();
        try
        {
            foreach (var cell in plan.Cells)
            {
                runs.Add(manager.Start(cell));
            }
        }
        catch (RequestRefusedException e)
        {
            // All or none: a soak of half its cells is not the soak asked for.
            runs.ForEach(r => r.RequestStop());
            await Task.WhenAll(runs.Select(r => r.Completion)).ConfigureAwait(false);
            Console.Error.WriteLine($"error: --soak: {plan.Cells.Count} scenarios at once: {e.Message}");
            return ExitCodes.Usage;
        }

        Directory.CreateDirectory(settings.OutputDirectory);
        Console.Error.WriteLine($"Soaking {runs.Count} scenarios side by side for {settings.SoakDuration:g} (+{plan.Cells[0].Warmup.TotalSeconds:0.###} s warmup); " +
            $"a line each every {ReportEvery.TotalMinutes:0} min; Ctrl+C ends it early; results and soak.html in {settings.OutputDirectory}");
        var all = Task.WhenAll(runs.Select(r => r.Completion));
        using (cancellationToken.Register(() => runs.ForEach(r => r.RequestStop())))
        {
            while (!all.IsCompleted)
            {
                await Task.WhenAny(all, Task.Delay(ReportEvery, CancellationToken.None)).ConfigureAwait(false);
                foreach (var run in runs)
                {
                    Console.Error.WriteLine(Line(run.Snapshot()));
                }
            }
        }

        var store = services.GetRequiredService<StoreWriter>();
        var catalog = services.GetRequiredService<ScenarioCatalog>();
        await store.FlushAsync(CancellationToken.None).ConfigureAwait(false);
        var records = runs.Select(r => catalog.Record(catalog.Get(r.Id))).ToList();
        await LocalRun.WriteResultsAsync(settings.OutputDirectory, records, catalog).ConfigureAwait(false);
        string page = Path.Combine(settings.OutputDirectory, "soak.html");
        await File.WriteAllTextAsync(page, SoakPages.Render(records, catalog.SoakPoints)).ConfigureAwait(false);
        Console.Out.Write(ResultTables.Render([.. records.Select(r => Schema.ScenarioProtos.ToProto(r.Scenario))]));
        Console.Out.WriteLine();
        foreach (var record in records)
        {
            Console.Out.WriteLine(Line(record.Scenario));
        }

        Console.Out.WriteLine($"Soak page: {page}");
        return records.Any(r => r.Scenario.State == RunState.Failed) ? ExitCodes.Failed
            : records.Any(r => r.Scenario.Stats?.Soak?.Verdict is not (SoakStatus.Holding or null)) ? ExitCodes.Regressed
            : cancellationToken.IsCancellationRequested ? ExitCodes.Interrupted : ExitCodes.Ok;
    }

    /// <summary>"uds 12:00 312.4 K msg/s HOLDING" with the reasons when it is not holding.</summary>
    private static string Line(ScenarioSnapshot s)
    {
        var soak = s.Stats?.Soak;
        string verdict = soak is null ? "not judged yet" : soak.Verdict.ToString().ToUpperInvariant();
        string reasons = soak is { Verdict: not SoakStatus.Holding and not SoakStatus.Judging } ? ": " + string.Join("; ", soak.Reasons) : string.Empty;
        double rate = s.LastInterval?.MessagesPerSecond ?? s.Stats?.MessagesPerSecond ?? 0;
        return string.Create(CultureInfo.InvariantCulture,
            $"{s.Spec?.Transport} {s.Id} {s.State.ToString().ToUpperInvariant()} {(soak?.JudgedOver ?? TimeSpan.Zero):hh\\:mm\\:ss} {ResultTables.Count(rate)} msg/s, " +
            $"lost {s.Stats?.MessagesLost ?? 0}: {verdict}{reasons}");
    }
}
