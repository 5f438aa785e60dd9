namespace IpcBench.Reports;

/// <summary>
/// A row of the precision table: how well a cell's median msg/s is known (<see cref="MedianPrecision"/>) and, in an
/// adaptive suite, after how many rounds and why the cell took no more. Markdown and HTML render the same rows.
/// </summary>
/// <param name="Rounds">Rounds the cell took (its repetitions, failed ones included).</param>
public sealed record PrecisionRow(string CellLabel, int Rounds, int Failed, double Median, double? PrecisionPercent, StopReason Stop)
{
    /// <summary>
    /// One row per cell; none when the suite is not adaptive and no cell has an interval (one repetition each says
    /// nothing about precision, and the table would be all dashes).
    /// </summary>
    public static IReadOnlyList<PrecisionRow> All(SuiteReport report)
    {
        var rows = report.Cells.Select(c =>
        {
            var s = c.Summary;
            return new PrecisionRow(c.Key.Label, c.Repetitions.Count, s.Failed, s.MessagesPerSecond.Median, s.MedianPrecisionPercent, c.Stop);
        }).ToList();
        return report.Adaptive is not null || rows.Any(r => r.PrecisionPercent is not null) ? rows : [];
    }

    public string PrecisionText => PrecisionPercent is { } p ? $"±{ReportFormatting.Number(p)} %" : "–";

    public string StopText => Stop switch
    {
        StopReason.TargetReached => "target reached",
        StopReason.MaxRepetitions => "max repetitions",
        StopReason.SuiteStopped => "suite stopped",
        _ => "–",
    };

    /// <summary>What the table's figures mean, under it.</summary>
    public static string Note(SuiteReport report) =>
        "±: half the width of the 95 % confidence interval of the median msg/s (Harrell–Davis estimate, Maritz–Jarrett standard error), " +
        "in percent of the median; – with fewer than 2 successful rounds." +
        (report.Adaptive is { } a
            ? $" Adaptive: a cell takes at least {a.MinRepetitions} rounds and at most {a.MaxRepetitions}, and stops once within " +
              $"±{ReportFormatting.Number(a.TargetPrecisionPercent)} % (target reached); max repetitions: the bound came first; suite stopped: the suite ended first."
            : string.Empty);
}
