using System.Text.Encodings.Web;
using System.Text.Json;
using IpcBench.Daemon.Control;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A cell whose repetitions form modes is marked in every format (Markdown, CSV, JSON, HTML, the proto's stats), with the
/// placement classes that explain them; a suite of too few repetitions says so instead of guessing.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ModalityReportTests
{
    private static readonly SuiteReport Placements = ReportSamples.Placements();

    private static readonly IReadOnlyList<CellModality> Cells = CellModality.Of(Placements);

    // The sample's rounds 1, 3, 4 ran near, 2, 5, 6 far.
    private static readonly string[] ByRound = ["near", "far", "near", "near", "far", "far"];

    [Fact]
    public void TheSample_HasABimodalCellByPlacement_AndAUnimodalOne()
    {
        Assert.Equal([2, 2, 1], Cells.Select(m => m.MessagesPerSecond.ModeCount));
        Assert.True(Cells[0].MessagesPerSecond.ByPlacement);
        Assert.Matches(@"^bimodal by placement: [\d.]+ M \(far ×3\), [\d.]+ M \(near ×3\)", Cells[0].Text);
        Assert.All(Cells, m => Assert.Equal(ByRound, m.Placements));
    }

    [Fact]
    public void Markdown_MarksTheFigure_AddsAModesColumn_AndExplainsBoth()
    {
        var lines = MarkdownReport.Render(Placements).Split('\n').Select(l => l.TrimEnd('\r')).ToList();

        // The "Every cell" table's rows (the precision table below it names the cells too).
        var cellsTable = lines.SkipWhile(l => !l.StartsWith("## Every cell", StringComparison.Ordinal)).TakeWhile(l => !l.StartsWith("## Precision", StringComparison.Ordinal)).ToList();
        var shm = Assert.Single(cellsTable, l => l.StartsWith("| shm-ring 8 B 1:1 full |", StringComparison.Ordinal));
        Assert.Contains(" " + MarkdownReport.ModalityMark + " |", shm, StringComparison.Ordinal);
        Assert.EndsWith($"| {MarkdownReport.Escape(Cells[0].Text)} |", shm, StringComparison.Ordinal);
        var uds = Assert.Single(cellsTable, l => l.StartsWith("| uds 8 B 1:1 full |", StringComparison.Ordinal));
        Assert.DoesNotContain(MarkdownReport.ModalityMark, uds, StringComparison.Ordinal);
        Assert.EndsWith("| unimodal |", uds, StringComparison.Ordinal);
        // The grid's row of 8 B marks shm-ring and channels, not uds.
        var grid = Assert.Single(lines, l => l.StartsWith("| 8 B |", StringComparison.Ordinal));
        Assert.Equal(2, grid.Split(MarkdownReport.ModalityMark).Length - 1);
        var note = Assert.Single(lines, l => l.StartsWith(MarkdownReport.ModalityMark + ": ", StringComparison.Ordinal));
        Assert.Contains("5 or more successful repetitions are needed to tell.", note, StringComparison.Ordinal);
        Assert.Contains("\"By placement\"", note, StringComparison.Ordinal);
        Assert.Contains("placement classes by core-to-core probe: near up to", note, StringComparison.Ordinal);
    }

    [Fact]
    public void Csv_GivesEachRepetitionItsPlacementAndMode_AndEachCellItsModes()
    {
        var csv = CsvTable.Parse(CsvReport.Render(Placements));

        var shm = csv.Rows.Where(r => csv.Get(r, "cell") == "0").ToList();
        Assert.Equal(ByRound, shm.Take(6).Select(r => csv.Get(r, "placement")));
        // Near ran faster: the second mode.
        Assert.Equal(["2", "1", "2", "2", "1", "1"], shm.Take(6).Select(r => csv.Get(r, "messages_per_second_mode")));
        var median = shm[6];
        Assert.Equal("median", csv.Get(median, "repetition"));
        Assert.Equal(("2", Cells[0].MessagesPerSecond.Text), (csv.Get(median, "messages_per_second_modes"), csv.Get(median, "messages_per_second_modality")));
        Assert.Equal(("2", Cells[0].LatencyP50!.Text), (csv.Get(median, "latency_p50_modes"), csv.Get(median, "latency_p50_modality")));
        Assert.Equal(("", ""), (csv.Get(median, "placement"), csv.Get(median, "messages_per_second_mode")));
        var uds = csv.Rows.Single(r => csv.Get(r, "cell") == "2" && csv.Get(r, "repetition") == "median");
        Assert.Equal(("1", "unimodal"), (csv.Get(uds, "messages_per_second_modes"), csv.Get(uds, "messages_per_second_modality")));
    }

    [Fact]
    public void Json_CarriesTheModes_ThePlacementOfEveryRepetition_AndTheBoundary()
    {
        using var json = JsonDocument.Parse(JsonReport.Render(Placements));
        var root = json.RootElement;

        var cell = root.GetProperty("cells")[0].GetProperty("modality");
        var rate = cell.GetProperty("messages_per_second");
        Assert.Equal("multimodal", rate.GetProperty("kind").GetString());
        Assert.Equal(2, rate.GetProperty("mode_count").GetInt32());
        Assert.True(rate.GetProperty("by_placement").GetBoolean());
        Assert.Equal(Cells[0].MessagesPerSecond.Text, rate.GetProperty("text").GetString());
        var fast = rate.GetProperty("modes")[1];
        Assert.Equal(3, fast.GetProperty("count").GetInt32());
        Assert.Equal("near", fast.GetProperty("placements")[0].GetProperty("placement").GetString());
        Assert.Equal(Cells[0].MessagesPerSecond.Modes[1].Location, fast.GetProperty("location").GetDouble());
        Assert.Equal(ByRound, cell.GetProperty("placements").EnumerateArray().Select(p => p.GetString()));
        Assert.Equal("multimodal", cell.GetProperty("latency_p50").GetProperty("kind").GetString());
        Assert.InRange(root.GetProperty("placement").GetProperty("boundary_nanoseconds").GetDouble(), 140, 480);
    }

    [Fact]
    public void Html_HasAModesColumn_MarkingTheMultimodalCells_AndTheNote()
    {
        var html = HtmlReport.Render(Placements);

        Assert.Contains("<th>Modes</th>", html, StringComparison.Ordinal);
        Assert.Contains($"<td class=\"modal\">{HtmlEncoder.Default.Encode(Cells[0].Text)}</td>", html, StringComparison.Ordinal);
        Assert.Contains("<td>unimodal</td>", html, StringComparison.Ordinal);
        Assert.Equal(2, html.Split("<td class=\"modal\">").Length - 1);
        Assert.Contains("id=\"modality-note\"", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Proto_StatsCarryTheModes()
    {
        var stats = SuiteProtos.ToProto(Placements.Cells[0].Summary, Cells[0]);
        var few = SuiteProtos.ToProto(ReportSamples.Matrix("few").Cells[0].Summary, CellModality.Of(ReportSamples.Matrix("few"))[0]);

        Assert.Equal((2, Cells[0].Text), (stats.Modes, stats.Modality));
        Assert.Equal((0, "too few repetitions to tell (3; 5 needed)"), (few.Modes, few.Modality));
    }

    [Fact]
    public void ThreeRepetitions_AreTooFewToTell_SaidOnce_NotAColumnOfIt()
    {
        var report = ReportSamples.Matrix("three", repetitions: 3);

        var markdown = MarkdownReport.Render(report);
        Assert.DoesNotContain(" Modes |", markdown, StringComparison.Ordinal);
        Assert.Contains("5 or more successful repetitions are needed to tell, and no cell here had them.", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("<th>Modes</th>", HtmlReport.Render(report), StringComparison.Ordinal);
        var csv = CsvTable.Parse(CsvReport.Render(report));
        Assert.All(csv.Rows.Where(r => csv.Get(r, "repetition") == "median"), r =>
            Assert.Equal(("0", "too few repetitions to tell (3; 5 needed)"), (csv.Get(r, "messages_per_second_modes"), csv.Get(r, "messages_per_second_modality"))));
        // No probes in this sample: every repetition's placement is unknown, and the JSON says why.
        Assert.All(csv.Rows.Where(r => csv.Get(r, "repetition") != "median"), r => Assert.Equal("unknown", csv.Get(r, "placement")));
        using var json = JsonDocument.Parse(JsonReport.Render(report));
        Assert.Equal("too_few", json.RootElement.GetProperty("cells")[0].GetProperty("modality").GetProperty("messages_per_second").GetProperty("kind").GetString());
        Assert.StartsWith("no core-to-core probe recorded", json.RootElement.GetProperty("placement").GetProperty("description").GetString(), StringComparison.Ordinal);
        Assert.Equal(JsonValueKind.Null, json.RootElement.GetProperty("placement").GetProperty("boundary_nanoseconds").ValueKind);
    }
}
