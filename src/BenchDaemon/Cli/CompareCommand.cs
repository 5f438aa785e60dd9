using System.CommandLine;
using System.Globalization;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Reports;

namespace IpcBench.Daemon.Cli;

/// <summary>
/// `BenchDaemon compare BASELINE CANDIDATE`: two runs' report.json compared offline, by the code CompareSuites and
/// `run --baseline` use (<see cref="SuiteComparison"/>): the "Compared with baseline" section on stdout, optionally
/// the candidate's report.html with it, and an exit code a CI pipeline gates on (<see cref="ExitCodes"/>).
/// </summary>
public static class CompareCommand
{
    public static Command Create()
    {
        var baseline = new Argument<string>("baseline")
        {
            Description = "The earlier run's report.json, or several joined by commas (their repetitions pooled, e.g. the rounds of an interleaved A/B)",
        };
        var candidate = new Argument<string>("candidate") { Description = "The run to judge: its report.json, or several joined by commas" };
        var threshold = new Option<double>("--threshold")
        {
            Description = "The smallest change of interest, percent: changes within it are SAME (0 < t <= 1000)",
            DefaultValueFactory = _ => ScenarioComparer.DefaultThresholdPercent,
        };
        var html = new Option<string?>("--html") { Description = "Also write the candidate's report.html, with the comparison, to this file" };
        var command = new Command("compare",
            "Compare two runs' report.json offline (rank tests per placement class) and exit 0 same/improved, 3 regressed, 4 inconclusive")
        {
            baseline, candidate, threshold, html,
        };
        command.SetAction(result => Execute(result.GetValue(baseline)!, result.GetValue(candidate)!, result.GetValue(threshold), result.GetValue(html)));
        return command;
    }

    private static int Execute(string baselinePath, string candidatePath, double threshold, string? htmlPath)
    {
        if (double.IsNaN(threshold) || threshold <= 0 || threshold > ScenarioComparer.MaxThresholdPercent)
        {
            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"error: --threshold: must be more than 0 and at most {ScenarioComparer.MaxThresholdPercent:0}; got {threshold}"));
            return ExitCodes.Usage;
        }

        SuiteReport baseline, candidate;
        try
        {
            baseline = ReportFile.Load("baseline", baselinePath);
            candidate = ReportFile.Load("candidate", candidatePath);
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return ExitCodes.Usage;
        }

        var comparison = SuiteComparison.Compare(baseline, candidate, threshold);
        Console.Out.Write(MarkdownReport.ComparisonSection(comparison));
        if (htmlPath is not null)
        {
            var path = Path.GetFullPath(htmlPath);
            File.WriteAllText(path, HtmlReport.Render(candidate, comparison));
            Console.Error.WriteLine($"report with the comparison in {path}");
        }

        return comparison.Verdict switch
        {
            Verdict.Regressed => ExitCodes.Regressed,
            Verdict.Inconclusive => ExitCodes.Inconclusive,
            _ => ExitCodes.Ok,
        };
    }
}
