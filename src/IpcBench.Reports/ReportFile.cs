using System.Text.Json;

namespace IpcBench.Reports;

/// <summary>
/// A report.json read back (what `run --out` and ExportSuite as JSON write): the suite, its environment and every
/// cell's repetitions, enough to compare a new run against it (`run --baseline`). Aggregates are recomputed from the
/// repetitions, so a comparison reads the same figures as one between two stored suites.
/// </summary>
public static class ReportFile
{
    public static SuiteReport Read(string json)
    {
        var file = JsonSerializer.Deserialize<FileDocument>(json, ReportDocument.JsonOptions);
        if (file?.Suite is not { } suite || file.Environment is not { } environment || file.Cells is not { } cells)
        {
            throw new InvalidDataException("not an IpcBench report.json: it needs \"suite\", \"environment\" and \"cells\"");
        }

        var read = cells.Select((c, i) => c.Key is { } key && c.Repetitions is { } repetitions
            ? new ReportCell(key, TimeSpan.FromSeconds(c.DurationSeconds), TimeSpan.FromSeconds(c.WarmupSeconds), repetitions, [], Stop: c.Stop, Search: c.RateSearch)
            : throw new InvalidDataException($"cell {i} of the report has no \"key\" or no \"repetitions\"")).ToList();
        return new SuiteReport(suite.Id, suite.Name, suite.State, suite.CreatedAt, suite.EndedAt, suite.Repetitions, environment, read,
            suite.PresetId, suite.PresetTitle, suite.PresetReproduces, suite.Adaptive);
    }

    /// <summary>
    /// A report.json file read for a command-line argument, or several joined by commas pooled into one (<see cref="Pool"/>):
    /// any reason one cannot be read (missing, unreadable, not a report) as an ArgumentException that starts with
    /// <paramref name="argument"/> and the path.
    /// </summary>
    public static SuiteReport Load(string argument, string paths)
    {
        var reports = new List<SuiteReport>();
        foreach (var path in paths.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            try
            {
                reports.Add(Read(File.ReadAllText(path)));
            }
            catch (Exception e) when (e is JsonException or InvalidDataException or IOException or UnauthorizedAccessException)
            {
                throw new ArgumentException($"{argument} {path}: {e.Message}", e);
            }
        }

        return reports.Count switch
        {
            0 => throw new ArgumentException($"{argument}: no report.json given"),
            1 => reports[0],
            _ => Pool(argument, reports),
        };
    }

    /// <summary>
    /// Several runs of one build as one suite: each cell's repetitions from every report, in the order given (rounds
    /// renumbered 1, 2, ...). What an interleaved A/B needs (bench/ab-builds.sh runs each build once a round, so a slow
    /// spell lands on both): each side's rounds pooled, then compared by the rank tests like two suites. Runs of one
    /// build on one machine only: reports whose environments differ (the probe, clock read and build aside) are refused.
    /// </summary>
    public static SuiteReport Pool(string argument, IReadOnlyList<SuiteReport> reports)
    {
        var first = reports[0];
        if (reports.FirstOrDefault(r => r.Environment.Machine() != first.Environment.Machine()) is { } other)
        {
            throw new ArgumentException($"{argument}: {other.SuiteId} ran in another environment than {first.SuiteId} ({other.Environment} vs " +
                $"{first.Environment}); pool runs of one machine only");
        }

        var cells = new List<ReportCell>();
        var byKey = new Dictionary<CellKey, int>();
        foreach (var cell in reports.SelectMany(r => r.Cells))
        {
            if (byKey.TryGetValue(cell.Key, out int index))
            {
                cells[index] = cells[index] with { Repetitions = [.. cells[index].Repetitions, .. cell.Repetitions] };
            }
            else
            {
                byKey[cell.Key] = cells.Count;
                cells.Add(cell);
            }
        }

        var renumbered = cells.Select(c => c with { Repetitions = [.. c.Repetitions.Select((r, i) => r with { Round = i + 1 })] }).ToList();
        return first with
        {
            SuiteId = $"{first.SuiteId}+{reports.Count - 1}",
            Name = $"{reports.Count} runs pooled",
            Repetitions = renumbered.Count == 0 ? 0 : renumbered.Max(c => c.Repetitions.Count),
            Cells = renumbered,
        };
    }

    private sealed record FileDocument(SuiteInfo? Suite, ReportEnvironment? Environment, IReadOnlyList<FileCell>? Cells);

    private sealed record FileCell(CellKey? Key, double DurationSeconds, double WarmupSeconds, IReadOnlyList<RepetitionResult>? Repetitions,
        StopReason Stop = StopReason.None, RateSearchReport? RateSearch = null);
}
