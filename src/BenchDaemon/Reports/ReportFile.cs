using System.Text.Json;

namespace IpcBench.Daemon.Reports;

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
            ? new ReportCell(key, TimeSpan.FromSeconds(c.DurationSeconds), TimeSpan.FromSeconds(c.WarmupSeconds), repetitions, [], Stop: c.Stop)
            : throw new InvalidDataException($"cell {i} of the report has no \"key\" or no \"repetitions\"")).ToList();
        return new SuiteReport(suite.Id, suite.Name, suite.State, suite.CreatedAt, suite.EndedAt, suite.Repetitions, environment, read,
            suite.PresetId, suite.PresetTitle, suite.PresetReproduces, suite.Adaptive);
    }

    /// <summary>
    /// A report.json file read for a command-line argument: any reason it cannot be read (missing, unreadable, not a
    /// report) as an ArgumentException that starts with <paramref name="argument"/> and the path.
    /// </summary>
    public static SuiteReport Load(string argument, string path)
    {
        try
        {
            return Read(File.ReadAllText(path));
        }
        catch (Exception e) when (e is JsonException or InvalidDataException or IOException or UnauthorizedAccessException)
        {
            throw new ArgumentException($"{argument} {path}: {e.Message}", e);
        }
    }

    private sealed record FileDocument(SuiteInfo? Suite, ReportEnvironment? Environment, IReadOnlyList<FileCell>? Cells);

    private sealed record FileCell(CellKey? Key, double DurationSeconds, double WarmupSeconds, IReadOnlyList<RepetitionResult>? Repetitions,
        StopReason Stop = StopReason.None);
}
