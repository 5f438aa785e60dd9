using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>
/// A repetition whose figures did not measure what its spec asked for: shown in every format, and the comparisons draw no
/// verdict from it.
/// </summary>
public sealed class ValidityReportTests
{
    private static readonly ValidityIssue Shortfall = new("rate_shortfall", "delivered 95,012 msg/s, 95.0 % of the offered 100,000 msg/s (at least 99 % needed)");

    [Fact]
    public void AnInvalidRepetition_LeavesTheTests_AndTheRestGiveTheVerdict_CountingWhatTheFlagCost()
    {
        var baseline = ReportSamples.Matrix("valid", ReportSamples.ComparedRepetitions);
        // uds is 20 % slower in the candidate, and one of its 8 B repetitions fell short of its rate: a shortfall can
        // move a figure by anything, so that repetition is out; 6 against 5 still tell.
        var candidate = WithIssue(ReportSamples.Candidate(baseline), "uds", 8, round: 2);

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        var uds8 = comparison.Cells.Single(c => c.Key is { Transport: "uds", PayloadBytes: 8 });
        Assert.Equal(Verdict.Regressed, uds8.Verdict);
        Assert.All(uds8.Metrics, m =>
        {
            Assert.Equal((6, 5), (m.BaselineSamples, m.CandidateSamples));
            Assert.EndsWith("without flagged repetitions (candidate round 2 (rate shortfall)): their flags could explain a shift of this size", m.Note, StringComparison.Ordinal);
        });
        Assert.Equal([new FlagCost("rate_shortfall", 0, 1)], uds8.FlagCosts);
        Assert.Contains("repetitions the validity flags cost (left out where they could explain the difference): rate shortfall: 0 + 1 repetition (baseline + candidate)",
            MarkdownReport.ComparisonSection(comparison), StringComparison.Ordinal);
        Assert.Equal(Verdict.Regressed, comparison.Cells.Single(c => c.Key is { Transport: "uds", PayloadBytes: 1024 }).Verdict);
        Assert.Equal(Verdict.Regressed, comparison.Verdict);
    }

    [Fact]
    public void EveryFormat_ShowsWhichRoundWasInvalid_AndWhy()
    {
        var report = WithIssue(ReportSamples.Matrix("invalid", 3), "shm-ring", 1024, round: 3);

        string markdown = MarkdownReport.Render(report);
        Assert.Contains("| invalid: round 3 (rate shortfall) |", markdown, StringComparison.Ordinal);
        Assert.Contains($"- shm-ring 1 KB 1:1 full, round 3: rate shortfall: {Shortfall.Detail}", markdown, StringComparison.Ordinal);

        var csv = CsvTable.Parse(CsvReport.Render(report));
        var rows = csv.Rows.Where(r => csv.Get(r, "transport") == "shm-ring" && csv.Get(r, "payload_bytes") == "1024").ToList();
        Assert.Equal(["", "", "rate_shortfall", "rate_shortfall"], rows.Select(r => csv.Get(r, "validity")));
        Assert.Equal(Shortfall.Detail, csv.Get(rows[2], "validity_detail"));
        Assert.Equal("invalid: round 3 (rate shortfall)", csv.Get(rows[3], "validity_detail"));

        string json = JsonReport.Render(report);
        var back = ReportFile.Read(json).Cells.Single(c => c.Key is { Transport: "shm-ring", PayloadBytes: 1024 });
        Assert.Equal([Shortfall], back.Repetitions.Single(r => r.Round == 3).Validity);
        Assert.True(back.Validity.Invalid);

        string html = HtmlReport.Render(report);
        Assert.Contains("<td class=\"invalid\">invalid: round 3 (rate shortfall)<ul><li>round 3: rate shortfall: delivered 95,012 msg/s", html, StringComparison.Ordinal);
    }

    [Fact]
    public void AReportWithoutIssues_SaysNothingOfValidity_InMarkdown()
    {
        string markdown = MarkdownReport.Render(ReportSamples.Matrix("clean", 3));
        Assert.DoesNotContain("Validity", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("Invalid repetitions", markdown, StringComparison.Ordinal);
    }

    private static SuiteReport WithIssue(SuiteReport report, string transport, int payload, int round) => report with
    {
        Cells = [.. report.Cells.Select(c => c.Key.Transport != transport || c.Key.PayloadBytes != payload ? c : c with
        {
            Repetitions = [.. c.Repetitions.Select(r => r.Round == round ? r with { Validity = [Shortfall] } : r)],
        })],
    };
}
