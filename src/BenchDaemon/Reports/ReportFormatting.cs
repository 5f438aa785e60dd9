using System.Globalization;

namespace IpcBench.Daemon.Reports;

/// <summary>Numbers as every renderer prints them: invariant culture, SI-style K/M, bytes in binary units.</summary>
public static class ReportFormatting
{
    public static string Bytes(int bytes) => bytes switch
    {
        >= 1024 * 1024 when bytes % (1024 * 1024) == 0 => $"{bytes / (1024 * 1024)} MB",
        >= 1024 when bytes % 1024 == 0 => $"{bytes / 1024} KB",
        _ => $"{bytes} B",
    };

    public static string Count(double value) => value switch
    {
        >= 1e6 => (value / 1e6).ToString("0.00", CultureInfo.InvariantCulture) + " M",
        >= 1e3 => (value / 1e3).ToString("0.0", CultureInfo.InvariantCulture) + " K",
        _ => value.ToString("0", CultureInfo.InvariantCulture),
    };

    public static string Megabytes(double bytesPerSecond) => (bytesPerSecond / 1e6).ToString("0.#", CultureInfo.InvariantCulture);

    public static string Percent(double value) => value.ToString("0", CultureInfo.InvariantCulture) + " %";

    public static string Micros(double nanoseconds) => (nanoseconds / 1e3).ToString(nanoseconds < 10_000 ? "0.00" : "0.#", CultureInfo.InvariantCulture);

    public static string Ratio(double value) => value.ToString(value < 0.1 ? "0.000" : "0.00", CultureInfo.InvariantCulture);

    /// <summary>About three significant digits: a figure measured to ±10 % has no more.</summary>
    public static string Number(double value) =>
        value.ToString(Math.Abs(value) >= 100 ? "0" : Math.Abs(value) >= 10 ? "0.#" : "0.##", CultureInfo.InvariantCulture);

    /// <summary>A comparison's change, signed: "+3.2 %", "−4.1 %", "+∞ %" when only the baseline was 0.</summary>
    public static string Change(double percent) => double.IsPositiveInfinity(percent) ? "+∞ %"
        : (percent >= 0 ? "+" : "−") + Math.Abs(percent).ToString("0.0", CultureInfo.InvariantCulture) + " %";

    public static string VerdictName(Verdict verdict) => verdict == Verdict.Unspecified ? "NOT COMPARED" : verdict.ToString().ToUpperInvariant();

    /// <summary>A comparison's one-line summary: the overall verdict, the threshold and how many cells went which way.</summary>
    public static string ComparisonSummary(SuiteComparison c) =>
        $"Overall {VerdictName(c.Verdict)} at a threshold of ±{Number(c.ThresholdPercent)} %: " +
        string.Join(", ", new[] { Verdict.Regressed, Verdict.Improved, Verdict.Same, Verdict.Unspecified }
            .Select(v => (Verdict: v, Count: c.Cells.Count(cell => cell.Verdict == v))).Where(p => p.Count > 0)
            .Select(p => $"{p.Count} {VerdictName(p.Verdict).ToLowerInvariant()}")) +
        $" of {c.Cells.Count} cell(s) in both suites.";

    /// <summary>The metrics of a cell whose change went beyond the threshold, e.g. "latency_p99 +12.0 %".</summary>
    public static string BeyondThreshold(CellComparison cell) => string.Join(", ",
        cell.Metrics.Where(m => m.Verdict is Verdict.Regressed or Verdict.Improved).Select(m => $"{m.Metric} {Change(m.ChangePercent)}"));
}
