using System.Text.Json;
using IpcBench.Reports;

namespace IpcBench.Reports.Tests;

/// <summary>Markdown, CSV, JSON and HTML from one model: the same figures, user text escaped, the HTML self-contained.</summary>
public sealed class ReportRendererTests
{
    private const string HostileName = "=<img src=x onerror=alert(1)> | cmd,\"quoted\"\nsecond line";

    [Fact]
    public void Markdown_HasTheGrid_EveryCell_AndPublishedVsMeasuredWithRatios()
    {
        var report = ReportSamples.Preset("reference-1");
        var markdown = MarkdownReport.Render(report);

        Assert.Contains("## Throughput, msg/s — 1:1, header-only, stream (median, min–max)", markdown, StringComparison.Ordinal);
        Assert.Contains("## Published vs measured", markdown, StringComparison.Ordinal);
        var rows = PublishedRow.All(report);
        Assert.Equal(report.Cells.Sum(c => c.Published.Count), rows.Count);
        var first = rows[0];
        Assert.NotNull(first.Ratio);
        Assert.Equal(first.Measured!.Value / first.Published, first.Ratio!.Value, 9);
        Assert.Contains($"| {first.Label} | {first.PublishedText} | {first.CellLabel} |", markdown, StringComparison.Ordinal);
        // The failed run in round 2 of cell 1 is counted, not averaged in.
        Assert.Contains("| 2 (1 failed) |", markdown, StringComparison.Ordinal);
        Assert.Equal(MarkdownReport.PublishedTable(report).Trim(), markdown[markdown.IndexOf("## Published vs measured", StringComparison.Ordinal)..].Trim());
    }

    /// <summary>The cells table's figures come from one list (CellColumns): Markdown and HTML show each, in its order, with the same text.</summary>
    [Fact]
    public void CellsTable_ShowsEveryFigureOfTheColumnList_InMarkdownAndHtml()
    {
        var report = ReportSamples.Matrix("columns");
        var cell = report.Cells[0];
        string markdown = MarkdownReport.Render(report);
        string html = HtmlReport.Render(report);

        string header = markdown.Split('\n').Single(l => l.StartsWith("| Cell | Runs | msg/s |", StringComparison.Ordinal));
        Assert.Contains(string.Concat(CellColumns.Figures.Select(c => $" {c.Header} |")), header, StringComparison.Ordinal);
        string row = markdown.Split('\n').First(l => l.StartsWith($"| {cell.Key.Label} |", StringComparison.Ordinal));
        Assert.Contains(string.Concat(CellColumns.Figures.Select(c => $" {c.Text(cell.Summary)} |")), row, StringComparison.Ordinal);
        Assert.Contains(string.Concat(CellColumns.Figures.Select(c => $"<th>{System.Text.Encodings.Web.HtmlEncoder.Default.Encode(c.Header)}</th>")), html, StringComparison.Ordinal);
        Assert.Contains(string.Concat(CellColumns.Figures.Select(c => $"<td>{System.Text.Encodings.Web.HtmlEncoder.Default.Encode(c.Text(cell.Summary))}</td>")), html, StringComparison.Ordinal);
        Assert.Contains(CellColumns.Figures, c => c.Header == "p99.9 µs");
    }

    [Fact]
    public void Markdown_EscapesUserText()
    {
        var markdown = MarkdownReport.Render(ReportSamples.Matrix(HostileName));

        Assert.DoesNotContain("<img", markdown, StringComparison.Ordinal);
        Assert.Contains("# =&lt;img src=x onerror=alert(1)&gt; \\| cmd,\"quoted\" second line", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void Spread_AboveTenPercent_IsMarkedInEveryFormat()
    {
        var report = ReportSamples.Matrix("spread");
        var flagged = report.Cells.Where(c => c.Summary.SpreadExceeded).ToList();
        Assert.NotEmpty(flagged);

        Assert.Contains(MarkdownReport.SpreadMark, MarkdownReport.Render(report), StringComparison.Ordinal);
        Assert.Contains("class=\"spread\"", HtmlReport.Render(report), StringComparison.Ordinal);
        // By name: the noise columns come after spread_exceeded.
        var csv = CsvTable.Parse(CsvReport.Render(report));
        Assert.Equal(flagged.Count, csv.Rows.Count(r => csv.Get(r, "spread_exceeded") == "true"));
    }

    [Fact]
    public void NoiseRetries_AreMarkedInEveryFormat_AndAQuietReportHasNoNoiseColumn()
    {
        var quiet = ReportSamples.Matrix("quiet");
        var cell = quiet.Cells[0];
        var round = cell.Repetitions[0].Round;
        var report = quiet with
        {
            Cells = [cell with { NoisyAttempts = [new(round, "a1", 31.24, true), new(round, "a2", 28.0, true), new(round, cell.Repetitions[0].ScenarioId, 40, false)] },
                .. quiet.Cells.Skip(1)],
        };
        const string Mark = "noisy: retried 2x (noise 31.2 %, 28 %); failed-noisy";

        Assert.DoesNotContain("Noise", MarkdownReport.Render(quiet), StringComparison.Ordinal);
        Assert.Contains($"| {Mark} |", MarkdownReport.Render(report), StringComparison.Ordinal);
        Assert.Contains($"<td class=\"noisy\">{Mark}</td>", HtmlReport.Render(report), StringComparison.Ordinal);
        var json = System.Text.Json.JsonDocument.Parse(JsonReport.Render(report)).RootElement.GetProperty("cells")[0];
        Assert.Equal(Mark, json.GetProperty("noise").GetProperty("text").GetString());
        Assert.Equal(2, json.GetProperty("noise").GetProperty("retries").GetInt32());
        Assert.Equal(3, json.GetProperty("noisy_attempts").GetArrayLength());
        var csv = CsvTable.Parse(CsvReport.Render(report));
        var median = csv.Rows.First(r => csv.Get(r, "repetition") == "median");
        Assert.Equal(["2", "31.24;28", "true"], new[] { "noise_retries", "noise_retried_percent", "failed_noisy" }.Select(c => csv.Get(median, c)));
        var first = csv.Rows.First(r => csv.Get(r, "repetition") == round.ToString(System.Globalization.CultureInfo.InvariantCulture));
        Assert.Equal(["2", "31.24;28", "true"], new[] { "noise_retries", "noise_retried_percent", "failed_noisy" }.Select(c => csv.Get(first, c)));
        Assert.All(csv.Rows.Where(r => csv.Get(r, "cell") != "0"), r => Assert.Equal("0", csv.Get(r, "noise_retries")));
    }

    [Fact]
    public void AdaptiveSuite_ShowsEachCellsPrecisionAndStop_InEveryFormat_AndReportJsonReadsThemBack()
    {
        var matrix = ReportSamples.Matrix("adaptive", repetitions: 6);
        StopReason[] stops = [StopReason.TargetReached, StopReason.MaxRepetitions, StopReason.SuiteStopped];
        var report = matrix with
        {
            Repetitions = 0,
            Adaptive = new AdaptiveRepetitions(2, 5, 6),
            Cells = [.. matrix.Cells.Select((c, i) => c with { Stop = stops[i % 3] })],
        };
        var first = report.Cells[0];
        var precision = first.Summary.MedianPrecisionPercent;
        Assert.NotNull(precision);
        string shown = $"±{ReportFormatting.Number(precision.Value)} %";

        var markdown = MarkdownReport.Render(report);
        Assert.Contains("adaptive repetitions in interleaved rounds (5–6 per cell, until the median msg/s is known within ±2 %)", markdown, StringComparison.Ordinal);
        Assert.Contains("| Cell | Rounds | msg/s median | ± (95 % CI) | Stopped |", markdown, StringComparison.Ordinal);
        Assert.Contains($"| {first.Key.Label} | 6 | {ReportFormatting.Count(first.Summary.MessagesPerSecond.Median)} | {shown} | target reached |", markdown, StringComparison.Ordinal);
        Assert.Contains($"| {report.Cells[1].Key.Label} | 6 |", markdown, StringComparison.Ordinal);
        Assert.Contains("| max repetitions |", markdown, StringComparison.Ordinal);
        Assert.Contains("| suite stopped |", markdown, StringComparison.Ordinal);
        var html = HtmlReport.Render(report);
        Assert.Contains("id=\"precision-table\"", html, StringComparison.Ordinal);
        Assert.Contains($"<td>{System.Text.Encodings.Web.HtmlEncoder.Default.Encode(shown)}</td><td>target reached</td>", html, StringComparison.Ordinal);
        var csv = CsvTable.Parse(CsvReport.Render(report));
        var medians = csv.Rows.Where(r => csv.Get(r, "repetition") == "median").ToList();
        Assert.Equal(["target_reached", "max_repetitions", "suite_stopped"], medians.Take(3).Select(r => csv.Get(r, "repetition_stop")));
        Assert.Equal(precision.Value, double.Parse(csv.Get(medians[0], "median_precision_percent"), System.Globalization.CultureInfo.InvariantCulture), 9);
        Assert.All(csv.Rows.Where(r => csv.Get(r, "repetition") != "median"), r => Assert.Equal("", csv.Get(r, "repetition_stop")));

        var json = JsonReport.Render(report);
        using (var document = JsonDocument.Parse(json))
        {
            var cell = document.RootElement.GetProperty("cells")[0];
            Assert.Equal("target_reached", cell.GetProperty("stop").GetString());
            Assert.Equal(precision.Value, cell.GetProperty("summary").GetProperty("figures").GetProperty("median_precision_percent").GetDouble(), 9);
            Assert.Equal(2, document.RootElement.GetProperty("suite").GetProperty("adaptive").GetProperty("target_precision_percent").GetDouble());
        }

        var read = ReportFile.Read(json);
        Assert.Equal(report.Adaptive, read.Adaptive);
        Assert.Equal(report.Cells.Select(c => c.Stop), read.Cells.Select(c => c.Stop));
    }

    [Fact]
    public void FixedRepetitions_ShowPrecisionWithoutAStopColumn_AndOneRepetitionShowsNone()
    {
        var three = ReportSamples.Matrix("fixed", repetitions: 3);
        var markdown = MarkdownReport.Render(three);

        Assert.Contains("3 repetition(s) in interleaved rounds", markdown, StringComparison.Ordinal);
        Assert.Contains("| Cell | Rounds | msg/s median | ± (95 % CI) |\n", markdown.ReplaceLineEndings("\n"), StringComparison.Ordinal);
        Assert.DoesNotContain("Stopped", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("Precision of the medians", MarkdownReport.Render(ReportSamples.Matrix("single", repetitions: 1)), StringComparison.Ordinal);
        Assert.DoesNotContain("precision-table", HtmlReport.Render(ReportSamples.Matrix("single", repetitions: 1)), StringComparison.Ordinal);
    }

    [Fact]
    public void Csv_HasARowPerRepetition_AndOnePerCell_WithTextQuoted()
    {
        var report = ReportSamples.Matrix("csv");
        var cell = report.Cells[0];
        var failed = cell.Repetitions[0] with { Error = HostileName };
        report = report with { Cells = [cell with { Repetitions = [failed, .. cell.Repetitions.Skip(1)] }, .. report.Cells.Skip(1)] };

        var table = CsvTable.Parse(CsvReport.Render(report));

        Assert.Equal("suite_id", table.Header[0]);
        Assert.Equal(report.Cells.Sum(c => c.Repetitions.Count + 1), table.Rows.Count);
        Assert.All(table.Rows, row => Assert.Equal(table.Header.Count, row.Count));
        Assert.Equal(report.Cells.Count, table.Rows.Count(r => table.Get(r, "repetition") == "median"));
        // A leading = is defused for spreadsheets; commas, quotes and the newline survive quoting.
        Assert.Equal("'" + HostileName, table.Get(table.Rows[0], "error"));
    }

    [Fact]
    public void Json_CarriesEveryRepetition_TheSummaries_AndThePublishedRows()
    {
        var report = ReportSamples.Preset("reference-3", repetitions: 2);
        using var json = JsonDocument.Parse(JsonReport.Render(report));
        var root = json.RootElement;

        Assert.Equal("reference-3", root.GetProperty("suite").GetProperty("preset_id").GetString());
        var cells = root.GetProperty("cells").EnumerateArray().ToList();
        Assert.Equal(report.Cells.Count, cells.Count);
        Assert.All(cells, c => Assert.Equal(2, c.GetProperty("repetitions").GetArrayLength()));
        var summary = cells[0].GetProperty("summary").GetProperty("figures").GetProperty("messages_per_second");
        Assert.Equal(report.Cells[0].Summary.MessagesPerSecond.Median, summary.GetProperty("median").GetDouble());
        Assert.Equal(report.Cells.Sum(c => c.Published.Count), root.GetProperty("published").GetArrayLength());
        Assert.Equal("one_way_latency_microseconds", root.GetProperty("published").EnumerateArray()
            .First(p => p.GetProperty("unit").GetString() == "µs").GetProperty("metric").GetString());
    }

    [Fact]
    public void Html_IsSelfContained_AndEncodesUserText()
    {
        var html = HtmlReport.Render(ReportSamples.Matrix(HostileName));

        Assert.DoesNotContain("<img", html, StringComparison.Ordinal);
        Assert.Contains("&lt;img src=x onerror=alert(1)&gt;", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<script src", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("<link", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("sourceMappingURL", html, StringComparison.Ordinal);
        Assert.Contains("default-src 'none'", html, StringComparison.Ordinal);
        // Chart.js and the error-bar plugin are inside the file.
        Assert.Contains("window.Chart=", html, StringComparison.Ordinal);
        Assert.Contains("BarWithErrorBarsController", html, StringComparison.Ordinal);
        // The only closing script tags are ours: the data block and the scripts.
        Assert.Equal(2, html.Split("</script>").Length - 1);
    }
}
