using System.Diagnostics;
using System.Text.RegularExpressions;
using Google.Protobuf;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>`BenchDaemon run`: the one-shot matrix, as a user runs it from a shell.</summary>
[Collection(DaemonCollection.Name)]
public sealed class RunCommandTests(ITestOutputHelper output) : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "run-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    /// <summary>`run --preset` through the suite engine: interleaved repetitions, and the published-vs-measured table.</summary>
    [Fact]
    public async Task Run_Preset_WithRepetitions_PrintsThePublishedVsMeasuredTable_AndWritesReportHtml()
    {
        var results = Path.Combine(_directory, "preset");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(240),
            "run", "--preset", "reference-4", "--repetitions", "2", "--duration", "200ms", "--warmup", "0s", "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode is 0 or 1, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Contains("## Published vs measured", stdout, StringComparison.Ordinal);
        Assert.Contains("| Reference | Published figure | Published | Ours (cell) | Ours | Ratio ours/published | Spread | Method differences |", stdout, StringComparison.Ordinal);
        Assert.Contains("published-figures.md §4", stdout, StringComparison.Ordinal);
        Assert.Contains("2 repetition(s) in interleaved rounds", stdout, StringComparison.Ordinal);
        Assert.StartsWith("<!DOCTYPE html>", File.ReadAllText(Path.Combine(results, "report.html")), StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>
    /// A preset on a machine without one of its transports runs the rest, as run's own matrix does, and each published
    /// figure stays on the cell that reproduces it (they were once matched by position, so every later figure slid onto
    /// the wrong cell). The shared-memory directory that does not exist makes shm-ring, reference-4's first cell, unavailable.
    /// </summary>
    [Fact]
    public async Task Run_Preset_SkipsTheCellsOfAnUnavailableTransport_AndKeepsEachFigureOnItsCell()
    {
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120),
            "run", "--preset", "reference-4", "--duration", "200ms", "--warmup", "0s", "--out", Path.Combine(_directory, "preset-partial"),
            $"--IpcBench:SharedMemoryDirectory={Path.Combine(_directory, "no-such-directory")}",
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode is 0 or 1, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Contains("skipping shm-ring: the shared-memory directory", log.Text, StringComparison.Ordinal);
        var published = stdout[stdout.IndexOf("## Published vs measured", StringComparison.Ordinal)..];
        Assert.DoesNotContain("shm-ring", published, StringComparison.Ordinal);
        Assert.Contains("| raw named pipes, 256 KB: ~6,000 ops/s | 6.0 K msg/s | named-pipes 256 KB 1:1 full round-trip |", published, StringComparison.Ordinal);
    }

    /// <summary>
    /// `--repetitions auto --precision P`: rounds until the median is known within ±P %, or the bound. The loosest
    /// target keeps it short (a busy machine may still need the bound); the rounds it took, the precision and why it
    /// stopped must agree across the table, the results and report.json.
    /// </summary>
    [Fact]
    public async Task Run_RepetitionsAuto_StopsAtThePrecisionOrTheBound_AndReportsWhereAndWhy()
    {
        var results = Path.Combine(_directory, "auto");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120),
            "run", "--transports", "channels", "--payloads", "64", "--duration", "200ms", "--warmup", "0s", "--repetitions", "auto", "--precision", "100",
            "--max-repetitions", "6", "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Contains("Running at most 6 scenarios", log.Text, StringComparison.Ordinal);
        Assert.Contains("adaptive repetitions in interleaved rounds (5–6 per cell, until the median msg/s is known within ±100 %)", stdout, StringComparison.Ordinal);
        var row = new Regex(@"^\| channels 64 B 1:1 full[^|]* \| (?<rounds>\d+) \| [^|]+ \| ±(?<precision>[0-9.]+) % \| (?<stop>target reached|max repetitions) \|$",
            RegexOptions.Multiline).Match(stdout);
        Assert.True(row.Success, stdout);
        int rounds = int.Parse(row.Groups["rounds"].Value, System.Globalization.CultureInfo.InvariantCulture);
        bool reached = row.Groups["stop"].Value == "target reached";
        Assert.InRange(rounds, 5, 6);
        Assert.True(reached ? double.Parse(row.Groups["precision"].Value, System.Globalization.CultureInfo.InvariantCulture) <= 100 : rounds == 6, row.Value);
        var export = JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json")));
        Assert.Equal(rounds, export.Scenarios.Count);
        using var report = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(results, "report.json")));
        Assert.Equal(reached ? "target_reached" : "max_repetitions", report.RootElement.GetProperty("cells")[0].GetProperty("stop").GetString());
    }

    /// <summary>`run --find-max-rate`: a closed-loop run and rate-limited probes, the answer in the report and report.json.</summary>
    [Fact]
    public async Task Run_FindMaxRate_SearchesEachCell_AndPrintsLatencyAgainstLoad()
    {
        var results = Path.Combine(_directory, "search");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120),
            "run", "--transports", "channels", "--payloads", "8", "--duration", "300ms", "--warmup", "0s", "--find-max-rate", "--max-p99", "1s",
            "--max-steps", "2", "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Contains("Running at most 3 scenarios", log.Text, StringComparison.Ordinal);
        Assert.Contains("## Latency against load — 8 B, 1:1, full, stream", stdout, StringComparison.Ordinal);
        // A load series is named with its wait (one chart holds every wait of a shape).
        Assert.Matches(new Regex(@"^- channels \(yield\): (sustainable [0-9.]+ K? ?msg/s per publisher|no sustainable rate: )", RegexOptions.Multiline), stdout);
        using var report = System.Text.Json.JsonDocument.Parse(File.ReadAllText(Path.Combine(results, "report.json")));
        var search = report.RootElement.GetProperty("cells")[0].GetProperty("rate_search");
        int probes = search.GetProperty("probes").GetArrayLength();
        Assert.InRange(probes, 1, 2);
        // Every probe is a scenario of the run: the closed-loop one and the probes.
        Assert.Equal(1 + probes, JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json"))).Scenarios.Count);
    }

    [Fact]
    public async Task Run_Rates_RunsEachCellAtEachRate()
    {
        var results = Path.Combine(_directory, "rates");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120),
            "run", "--transports", "channels", "--payloads", "8", "--duration", "300ms", "--warmup", "0s", "--rates", "500,2000", "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        var export = JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json")));
        Assert.Equal([500, 2000], export.Scenarios.Select(s => s.Scenario.Spec.RatePerPublisher));
        Assert.Contains("## Latency against load — 8 B, 1:1, full, stream", stdout, StringComparison.Ordinal);
        Assert.Contains("| channels (yield) | 2.0 K |", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Run_UdsAndChannels_PrintsATableRowForEach_AndWritesResultsJsonCsvAndHdrLog()
    {
        var results = Path.Combine(_directory, "out");
        var database = Path.Combine(_directory, "state", "scenarios.db");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(90),
            "run", "--transports", "uds,channels", "--payloads", "64", "--duration", "500ms", "--warmup", "0s", "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={database}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        foreach (var transport in new[] { "uds", "channels" })
        {
            // The per-scenario table: | Transport | Payload | N:M | ... | State |
            Assert.Matches(new Regex($@"^\| {Regex.Escape(transport)} \| 64 B \| 1:1 \| full \| .* \| COMPLETED \|$", RegexOptions.Multiline), stdout);
        }

        // The throughput grid: one column per transport.
        Assert.Matches(new Regex(@"^\| Payload \| uds \| channels \|$", RegexOptions.Multiline), stdout);

        // report.html: the suite's self-contained report (run is a client of the suite engine); report.json, what --baseline reads.
        Assert.Equal(["report.html", "report.json", "results-series.csv", "results.csv", "results.hlog", "results.json"],
            Directory.GetFiles(results).Select(Path.GetFileName).Order());
        var export = JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json")));
        var scenarios = export.Scenarios.Select(r => r.Scenario).ToList();
        Assert.Equal(["channels", "uds"], scenarios.Select(s => s.Spec.Transport).Order());
        Assert.All(export.Scenarios, record =>
        {
            var s = record.Scenario;
            Assert.Equal(ScenarioState.Completed, s.State);
            Assert.Equal(64, s.Spec.PayloadBytes);
            Assert.True(s.Stats is { MessagesReceived: > 0, MessagesLost: 0, MessagesCorrupted: 0 }, JsonFormatter.Default.Format(s));
            Assert.True(s.Environment is { LogicalCores: > 0 }, JsonFormatter.Default.Format(s));
            // A point per tick, and one when the measured window ends: at least one.
            Assert.True(record.Series.Count >= 1, JsonFormatter.Default.Format(record));
            Assert.All(record.Series, p => Assert.True(p.MessagesPerSecond >= 0 && p.Elapsed is not null, p.ToString()));
            Assert.Equal(string.Empty, s.StorageError);
        });

        // The CSV: a header and one row per scenario, the same figures as the JSON.
        var csv = CsvTable.Parse(File.ReadAllText(Path.Combine(results, "results.csv")));
        Assert.Equal(2, csv.Rows.Count);
        foreach (var scenario in scenarios)
        {
            var row = csv.Rows.Single(r => csv.Get(r, "id") == scenario.Id);
            Assert.Equal(scenario.Spec.Transport, csv.Get(row, "transport"));
            Assert.Equal("SCENARIO_STATE_COMPLETED", csv.Get(row, "state"));
            Assert.Equal(scenario.Stats.MessagesReceived.ToString(System.Globalization.CultureInfo.InvariantCulture), csv.Get(row, "messages_received"));
            Assert.Equal(scenario.Stats.MessagesPerSecond, double.Parse(csv.Get(row, "messages_per_second"), System.Globalization.CultureInfo.InvariantCulture));
        }

        var series = CsvTable.Parse(File.ReadAllText(Path.Combine(results, "results-series.csv")));
        Assert.Equal(export.Scenarios.Sum(r => r.Series.Count), series.Rows.Count);

        // The latency per second of both (one through an agent, one in-process), as HdrHistogram's log reader reads it.
        using (var hlog = File.OpenRead(Path.Combine(results, "results.hlog")))
        {
            HdrLogAssertions.HoldsEveryReportedLatency(hlog, scenarios);
        }

        // The run also kept its scenarios in the database it was given.
        Assert.True(File.Exists(database), $"no database at {database}");

        // Stderr is a pipe here: one plain progress line per finished scenario, no per-poll RUNNING lines, no terminal escapes.
        var progress = log.Lines(0).Where(l => Regex.IsMatch(l, @"^\[err\] \[\d+/\d+\] ")).ToList();
        Assert.Equal(2, progress.Count);
        Assert.Matches(new Regex(@"^\[err\] \[1/2\] uds 64 B 1:1 full \w+: \d[\d.]* (K |M )?msg/s, COMPLETED(, invalid: .*)?$"), progress[0]);
        Assert.Matches(new Regex(@"^\[err\] \[2/2\] channels 64 B 1:1 full \w+: \d[\d.]* (K |M )?msg/s, COMPLETED(, invalid: .*)?$"), progress[1]);
        Assert.DoesNotContain("\u001b[", log.Text, StringComparison.Ordinal);

        // The placement facts once, not once per scenario.
        Assert.Single(stdout.Split('\n'), l => l.StartsWith("Placement: ", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Run_OnATerminal_DrawsALiveProgressDisplayOnStderr_AndStdoutStillHoldsTheMarkdownTables()
    {
        // script(1) gives the daemon a pseudo-terminal for stderr; stdout goes to a file, as `run ... > results.md` does.
        var tables = Path.Combine(_directory, "tables.md");
        Directory.CreateDirectory(_directory);
        string[] run =
        [
            RepoLayout.DaemonExecutable, "run", "--transports", "channels", "--payloads", "64", "--duration", "1s", "--warmup", "200ms",
            "--out", Path.Combine(_directory, "out"), $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}",
            $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}",
        ];
        var start = new ProcessStartInfo("script") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in (string[])["-qefc", string.Join(' ', run.Select(ShellQuote)) + " > " + ShellQuote(tables), "/dev/null"])
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["TERM"] = "xterm-256color";
        start.Environment.Remove("NO_COLOR");
        var (exitCode, terminal, log) = await DaemonRun.RunAsync(start, TimeSpan.FromSeconds(90));
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        // Redrawn in place (cursor up), not appended: the live display, where plain lines only return the carriage.
        Assert.Contains("\u001b[1A", terminal, StringComparison.Ordinal);
        Assert.Matches(new Regex(@"\[1/1\] channels 64 B full 1:1 all-to-all RUNNING \d[\d.]* (K |M )?msg/s"), terminal);
        Assert.Matches(new Regex(@"\d+% of 1 scenarios, ETA \d+:\d\d:\d\d"), terminal);

        var markdown = await File.ReadAllTextAsync(tables);
        Assert.Matches(new Regex(@"^\| channels \| 64 B \| 1:1 \| full \| .* \| COMPLETED \|$", RegexOptions.Multiline), markdown);
        Assert.Matches(new Regex(@"^\| Payload \| channels \|$", RegexOptions.Multiline), markdown);
        Assert.DoesNotContain("\u001b", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("msg/s]", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Run_WithPlacementOptions_RunsPinned_AndABadCpuListNamesTheOption()
    {
        var results = Path.Combine(_directory, "out");
        string[] common = [$"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}"];
        var cpus = File.ReadLines("/proc/self/status").First(l => l.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal))[18..].Trim();
        var last = Workload.Placement.CpuSet.Parse(cpus).Cpus[^1].ToString(System.Globalization.CultureInfo.InvariantCulture);

        var (badExit, _, badLog) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(60), ["run", "--publisher-cpus", "0-x", .. common]);
        var (exitCode, _, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(90),
            ["run", "--transports", "channels", "--payloads", "64", "--duration", "300ms", "--warmup", "0s", "--rate", "2000", "--wait", "block",
             "--publisher-cpus", "0", "--subscriber-cpus", last, "--out", results, .. common]);
        output.WriteLine(log.Describe());

        Assert.Equal(2, badExit);
        Assert.Contains("error: --publisher-cpus: '0-x' is not a CPU number or range", badLog.Describe(), StringComparison.Ordinal);
        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        var export = JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json")));
        var spec = Assert.Single(export.Scenarios).Scenario.Spec;
        Assert.Equal("0", spec.PublisherCpus);
        Assert.Equal(last, spec.SubscriberCpus);
        Assert.Equal(0, spec.RealtimePriority);
        Assert.False(spec.LockMemory);
    }

    /// <summary>`run --preset` is a suite: the placement options reach every preset cell, as they reach run's own matrix.</summary>
    [Fact]
    public async Task Run_Preset_WithPlacementOptions_RunsEveryCellPinned()
    {
        var results = Path.Combine(_directory, "preset-pinned");
        var cpus = File.ReadLines("/proc/self/status").First(l => l.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal))[18..].Trim();
        var allowed = Workload.Placement.CpuSet.Parse(cpus).Cpus;
        var (first, last) = (allowed[0].ToString(System.Globalization.CultureInfo.InvariantCulture), allowed[^1].ToString(System.Globalization.CultureInfo.InvariantCulture));

        var (exitCode, _, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(240),
            "run", "--preset", "reference-4", "--duration", "200ms", "--warmup", "0s", "--publisher-cpus", first, "--subscriber-cpus", last, "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode is 0 or 1, $"exit code {exitCode}\n{log.Describe()}");
        var export = JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json")));
        Assert.NotEmpty(export.Scenarios);
        Assert.All(export.Scenarios, s => Assert.Equal(first, s.Scenario.Spec.PublisherCpus));
        Assert.All(export.Scenarios, s => Assert.Equal(last, s.Scenario.Spec.SubscriberCpus));
    }

    private static string ShellQuote(string value) => "'" + value.Replace("'", "'\\''", StringComparison.Ordinal) + "'";
}
