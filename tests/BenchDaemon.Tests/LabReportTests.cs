using System.Text.Json;
using System.Text.RegularExpressions;
using IpcBench.Daemon.Core;
using IpcBench.Reports;
using IpcBench.Daemon.Run;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The lab report of `run --daemons` from sample suites: machines side by side with their ratios to the reference, the
/// failed machine named with its reason, the comparisons, in Markdown, JSON and HTML alike; and its exit code.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class LabReportTests
{
    private const string Lost = "lost mid-suite after 2 of 6 scenarios: the daemon no longer answers (Unavailable: Connection refused)";

    /// <summary>lab-02 ran the reference's matrix with uds 20 % slower and shm-ring 20 % faster (ReportSamples.Candidate); lab-03 vanished.</summary>
    private static LabReport Lab(string firstName = "lab-01")
    {
        var reference = ReportSamples.Matrix("run --daemons", ReportSamples.ComparedRepetitions);
        return new LabReport("run --daemons", new DateTimeOffset(2026, 11, 25, 4, 0, 0, TimeSpan.Zero),
        [
            new MachineResult(firstName, "10.0.0.5:5051", reference, null, Placement("0", "1")),
            new MachineResult("lab-02", "https://10.0.0.6:5051", ReportSamples.Candidate(reference), null, Placement("unpinned", "unpinned")),
            new MachineResult("lab-03", "10.0.0.7:5051", null, Lost),
        ]);
    }

    [Fact]
    public void Markdown_PutsTheFinishedMachinesSideBySide_WithTheirRatioToTheFirst_AndNamesTheFailedOne()
    {
        var markdown = LabMarkdownReport.Render(Lab(), 5);

        Assert.StartsWith("# run --daemons — 3 machine(s)", markdown, StringComparison.Ordinal);
        Assert.Contains("2 of 3 machine(s) finished. Reference: lab-01;", markdown, StringComparison.Ordinal);
        Assert.Contains($"- lab-03 (10.0.0.7:5051) failed: {Lost}", markdown, StringComparison.Ordinal);
        Assert.Matches(new Regex(@"^\| lab-03 \| 10\.0\.0\.7:5051 \| FAILED \| – \|", RegexOptions.Multiline), markdown);
        Assert.Matches(new Regex(@"^\| lab-01 \| 10\.0\.0\.5:5051 \| COMPLETED \| suite-0002 \| AMD EPYC 7B13, 2 cores \|", RegexOptions.Multiline), markdown);

        var msgs = Section(markdown, "## Side by side: msg/s");
        Assert.Contains("| Cell | lab-01 | lab-02 | lab-02 ÷ lab-01 |", msgs, StringComparison.Ordinal);
        // Only the finished machines have columns, and every cell of the matrix has a row.
        Assert.DoesNotContain("lab-03", msgs, StringComparison.Ordinal);
        Assert.Equal(12, Regex.Matches(msgs, @"^\| (channels|uds|shm-ring|iceoryx2) ", RegexOptions.Multiline).Count);
        Assert.Matches(new Regex(@"^\| uds 1 KB 1:1 full \| [\d.]+ K \| [\d.]+ K \| 0\.80 \|$", RegexOptions.Multiline), msgs);
        Assert.Matches(new Regex(@"^\| shm-ring 8 B 1:1 full \| [\d.]+ M \| [\d.]+ M \| 1\.20 \|$", RegexOptions.Multiline), msgs);
        Assert.Matches(new Regex(@"^\| channels 64 KB 1:1 full \| [\d.]+ K \| [\d.]+ K \| 1\.00 \|$", RegexOptions.Multiline), msgs);
        // Latency moves the other way: slower uds is a p99 ratio of 1 / 0.8.
        Assert.Matches(new Regex(@"^\| uds 1 KB 1:1 full \| [\d.]+ \| [\d.]+ \| 1\.25 \|$", RegexOptions.Multiline), Section(markdown, "## Side by side: latency p99"));
        Assert.Matches(new Regex(@"^\| shm-ring 1 KB 1:1 full \| [\d.]+ \| [\d.]+ \| 0\.83 \|$", RegexOptions.Multiline), Section(markdown, "## Side by side: latency p50"));

        Assert.Contains("| lab-01 | publishers on 0, subscribers on 1, probe 0<->1;".Replace("<", "&lt;").Replace(">", "&gt;"), markdown, StringComparison.Ordinal);
        var comparison = Section(markdown, "## lab-02 against lab-01");
        Assert.Contains("REGRESSED — Overall REGRESSED at a threshold of ±5 %", comparison, StringComparison.Ordinal);
        Assert.Contains("| Cell | Verdict | msg/s lab-01 | msg/s lab-02 | msg/s change |", comparison, StringComparison.Ordinal);
        Assert.Matches(new Regex(@"^\| uds 1 KB 1:1 full \| REGRESSED \| ", RegexOptions.Multiline), comparison);
        Assert.Matches(new Regex(@"^\| shm-ring 1 KB 1:1 full \| IMPROVED \| ", RegexOptions.Multiline), comparison);
        Assert.Matches(new Regex(@"^\| channels 1 KB 1:1 full \| SAME \| ", RegexOptions.Multiline), comparison);
        Assert.DoesNotContain("## lab-03 against", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void Json_NamesEveryMachineByAddressAndName_WithItsReportOrItsError_AndTheComparison()
    {
        using var json = JsonDocument.Parse(LabDocument.Build(Lab(), 5).ToJson());
        var root = json.RootElement;

        Assert.Equal("lab-01", root.GetProperty("lab").GetProperty("reference").GetString());
        var machines = root.GetProperty("machines").EnumerateArray().ToList();
        Assert.Equal(["lab-01", "lab-02", "lab-03"], machines.Select(m => m.GetProperty("name").GetString()));
        Assert.Equal(["10.0.0.5:5051", "https://10.0.0.6:5051", "10.0.0.7:5051"], machines.Select(m => m.GetProperty("address").GetString()));
        Assert.Equal(["COMPLETED", "COMPLETED", "FAILED"], machines.Select(m => m.GetProperty("state").GetString()));
        Assert.Equal(Lost, machines[2].GetProperty("error").GetString());
        Assert.Equal(JsonValueKind.Null, machines[2].GetProperty("report").ValueKind);
        Assert.Equal(JsonValueKind.Null, machines[0].GetProperty("error").ValueKind);
        // Each finished machine's part is a whole report document, as ExportSuite writes one.
        Assert.Equal("suite-0002", machines[0].GetProperty("report").GetProperty("suite").GetProperty("id").GetString());
        Assert.Equal(12, machines[1].GetProperty("report").GetProperty("cells").GetArrayLength());
        Assert.Equal("1", machines[0].GetProperty("placement").GetProperty("subscriber_cpus").GetString());
        Assert.False(machines[0].TryGetProperty("comparison", out _));
        Assert.Equal("regressed", machines[1].GetProperty("comparison").GetProperty("verdict").GetString());
        Assert.Equal("lab-01 suite-0002", machines[1].GetProperty("comparison").GetProperty("baseline_id").GetString());

        var uds = root.GetProperty("side_by_side").EnumerateArray().Single(r => r.GetProperty("label").GetString() == "uds 1 KB 1:1 full");
        var figures = uds.GetProperty("machines").EnumerateArray().ToList();
        Assert.Equal(["lab-01", "lab-02"], figures.Select(f => f.GetProperty("machine").GetString()));
        Assert.Equal(JsonValueKind.Null, figures[0].GetProperty("messages_per_second_ratio").ValueKind);
        Assert.Equal(0.8, figures[1].GetProperty("messages_per_second_ratio").GetDouble(), 9);
        Assert.Equal(1.25, figures[1].GetProperty("latency_p99_ratio").GetDouble(), 9);
    }

    [Fact]
    public void Html_HasTheSameSections_EncodesMachineNames_AndLoadsNothing()
    {
        var html = LabHtmlReport.Render(Lab(firstName: "<img src=x onerror=alert(1)>"), 5);

        Assert.StartsWith("<!DOCTYPE html>", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<img", html, StringComparison.Ordinal);
        // Two scripts, ours: the chart's data (JSON, names escaped) and Chart.js with lab.js; the page outside them loads nothing.
        Assert.Equal(2, Regex.Matches(html, "<script").Count);
        string page = Regex.Replace(html, "<script[^>]*>.*?</script>", string.Empty, RegexOptions.Singleline);
        Assert.DoesNotContain("http://", page.Replace("http://www.w3.org", string.Empty, StringComparison.Ordinal), StringComparison.Ordinal);
        Assert.Contains("\\u003Cimg src=x onerror=alert(1)\\u003E", html, StringComparison.Ordinal);
        foreach (var id in new[] { "machines", "msgs", "p50", "p99", "placement", "comparison-1" })
        {
            Assert.Contains($"<section id=\"{id}\">", html, StringComparison.Ordinal);
        }

        Assert.Contains($"failed: {Lost}", html, StringComparison.Ordinal);
        Assert.Contains("<td>0.80</td>", html, StringComparison.Ordinal);
    }

    [ChromiumFact]
    public async Task Html_DrawsTheMachinesChart_ABarPerMachineAndCell()
    {
        var directory = Path.Combine(RepoLayout.Root, "TestResults", "report");
        Directory.CreateDirectory(directory);
        var html = Path.Combine(directory, "lab.html");
        await File.WriteAllTextAsync(html, LabHtmlReport.Render(Lab(), 5));

        using var result = JsonDocument.Parse(await ChromiumTools.CheckAsync(html, Path.Combine(directory, "lab.png")));
        var root = result.RootElement;
        Assert.Empty(root.GetProperty("pageErrors").EnumerateArray());
        Assert.Empty(root.GetProperty("consoleErrors").EnumerateArray());
        Assert.Empty(root.GetProperty("refused").EnumerateArray());
        var chart = Assert.Single(root.GetProperty("charts").EnumerateArray());
        Assert.Equal("machines", chart.GetProperty("kind").GetString());
        var datasets = chart.GetProperty("datasets").EnumerateArray().ToList();
        // The two machines that finished (lab-03 was lost), a bar for each of the matrix's 12 cells, each laid out.
        Assert.Equal(["lab-01", "lab-02"], datasets.Select(d => d.GetProperty("label").GetString()));
        Assert.All(datasets, d => Assert.Equal((12, 12), (d.GetProperty("points").GetInt32(), d.GetProperty("drawn").GetInt32())));
        Assert.NotEqual(datasets[0].GetProperty("colour").GetString(), datasets[1].GetProperty("colour").GetString());
    }

    /// <summary>When the first machine failed, the first that finished is the reference; a cell one machine lacks is "not run" there.</summary>
    [Fact]
    public void AFailedFirstMachine_HandsTheReferenceOn_AndACellOnlyOneMachineRanIsNotRunOnTheOther()
    {
        var reference = ReportSamples.Matrix("run --daemons", repetitions: 3);
        var fewer = reference with { SuiteId = "other", Cells = [.. reference.Cells.Where(c => c.Key.Transport != "iceoryx2")] };
        var lab = new LabReport("run --daemons", DateTimeOffset.UnixEpoch,
        [
            new MachineResult("lab-01", "10.0.0.5:5051", null, "StartSuite: Unavailable: Connection refused"),
            new MachineResult("lab-02", "10.0.0.6:5051", reference, null),
            new MachineResult("lab-03", "10.0.0.7:5051", fewer, null),
        ]);

        var markdown = LabMarkdownReport.Render(lab, 5);

        Assert.Equal("lab-02", lab.Reference?.Name);
        Assert.Contains("| Cell | lab-02 | lab-03 | lab-03 ÷ lab-02 |", markdown, StringComparison.Ordinal);
        Assert.Matches(new Regex(@"^\| iceoryx2 8 B 1:1 full \| [\d.]+ M \| not run \| – \|$", RegexOptions.Multiline), markdown);
        Assert.Contains("## lab-03 against lab-02", markdown, StringComparison.Ordinal);
        Assert.Contains("- lab-01 (10.0.0.5:5051) failed: StartSuite: Unavailable: Connection refused", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void ExitCode_IsPartialWhenSomeMachinesFailed_FailedWhenAllDid_AndInterruptedAboveAll()
    {
        var lab = Lab();
        var allFinished = lab with { Machines = [.. lab.Machines.Take(2)] };
        var noneFinished = lab with { Machines = [lab.Machines[2]] };
        var failedScenario = new LabReport("run --daemons", DateTimeOffset.UnixEpoch, [new MachineResult("lab-01", "a:1", ReportSamples.Preset("reference-1"), null)]);

        Assert.Equal(ExitCodes.Partial, LabRun.ExitCode(lab, interrupted: false));
        Assert.Equal(5, ExitCodes.Partial);
        Assert.Equal(ExitCodes.Ok, LabRun.ExitCode(allFinished, interrupted: false));
        Assert.Equal(ExitCodes.Failed, LabRun.ExitCode(noneFinished, interrupted: false));
        // A FAILED scenario on a finished machine fails the run, as it does locally (the preset sample has one).
        Assert.Equal(ExitCodes.Failed, LabRun.ExitCode(failedScenario, interrupted: false));
        Assert.Equal(ExitCodes.Interrupted, LabRun.ExitCode(lab, interrupted: true));
    }

    private static MachinePlacement Placement(string publishers, string subscribers) =>
        new(publishers, subscribers, "0<->1", "no", ["L3 Unified"], "on", "0:0,2 1:1,3", "0:0 1:0", "acpi-cpufreq/performance", string.Empty, string.Empty, "none", "madvise");

    /// <summary>From a "## " heading to the next one.</summary>
    private static string Section(string markdown, string heading)
    {
        int start = markdown.IndexOf(heading, StringComparison.Ordinal);
        Assert.True(start >= 0, $"no '{heading}' in\n{markdown}");
        int end = markdown.IndexOf("\n## ", start + heading.Length, StringComparison.Ordinal);
        return end < 0 ? markdown[start..] : markdown[start..end];
    }
}
