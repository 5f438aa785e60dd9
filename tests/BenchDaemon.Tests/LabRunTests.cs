using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// `run --daemons` as a user runs it against a lab: real daemons on loopback, each with its own runtime directory and
/// database, and BenchDaemon run as a process. Its verdicts are about the lab's plumbing, not its figures, so every
/// suite is paced with BLOCK waits (channels would yield by default, spinning as it waits), and the class runs in the
/// light lane. Three daemons and a run process starting at once take the machine for seconds: beside the measuring
/// lane's spinning tests the class took 68 s against 19 s alone (2026-11-29), and 46 s in the measuring lane itself,
/// which is the longest; the light lane, with WarmAgentTests gone to the wait lane, has the room (2026-11-30).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class LabRunTests(ITestOutputHelper output) : IDisposable
{
    private const string Token = "lab-token-0123456789abcdef";

    private static readonly string[] ShortSuite =
        ["--transports", "channels,uds", "--payloads", "8", "--duration", "300ms", "--warmup", "0s", "--repetitions", "3", "--rate", "2000", "--wait", "block"];

    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "lab-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    /// <summary>
    /// Three daemons, the third killed (its whole process tree) once `run` has seen its first scenario done: the two
    /// others finish and are side by side in the Markdown and the JSON, the third is named with its reason, and the exit
    /// code says partial.
    /// </summary>
    [Fact]
    public async Task ThreeDaemons_OneKilledMidSuite_TheOthersFinishSideBySide_TheLostOneIsNamed_AndTheExitCodeIsPartial()
    {
        await using var first = await DaemonProcess.StartAsync();
        await using var second = await DaemonProcess.StartAsync();
        await using var victim = await DaemonProcess.StartAsync();
        var results = Path.Combine(_directory, "out");
        var (a, b, c) = (first.Address, second.Address, victim.Address);

        var (exitCode, stdout, log) = await RunAsync(["run", "--daemons", $"{a},{b},{c}", .. ShortSuite, "--out", results], async (_, runLog) =>
        {
            // Mid-suite: once `run` itself has seen the victim finish a scenario of its six. "lost mid-suite after N" counts
            // what the daemon last told run; the daemon's own count (ListSuites) can be ahead of that when the kill lands.
            await Poll.UntilAsync(() => runLog.Lines(0).Any(line => ScenariosDoneSeenByRun(line, c) >= 1), TimeSpan.FromSeconds(60),
                () => $"run never showed {c} done with a scenario\n{runLog.Describe()}");
            foreach (var process in ProcessTree.Descendants(victim.Pid))
            {
                ProcessTree.SignalIfAlive(process, ProcessTree.SigKill);
            }

            await victim.KillAsync();
        });

        Assert.True(exitCode == ExitCodes.Partial, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Contains("2 of 3 machine(s) finished. Reference: " + a, stdout, StringComparison.Ordinal);
        Assert.Matches(new Regex($@"^- {Regex.Escape(c)} \({Regex.Escape(c)}\) failed: lost mid-suite after [1-5] of 6 scenarios: .*Unavailable", RegexOptions.Multiline), stdout);
        Assert.Matches(new Regex($@"^\| {Regex.Escape(c)} \| {Regex.Escape(c)} \| FAILED \|", RegexOptions.Multiline), stdout);
        foreach (var section in new[] { "## Side by side: msg/s", "## Side by side: latency p50", "## Side by side: latency p99" })
        {
            var table = stdout[stdout.IndexOf(section, StringComparison.Ordinal)..];
            Assert.StartsWith($"{section}", table, StringComparison.Ordinal);
            Assert.Contains($"| Cell | {a} | {b} | {b} ÷ {a} |\n", table, StringComparison.Ordinal);
            foreach (var transport in new[] { "channels", "uds" })
            {
                // Both machines measured (a figure, no "failed"), with the ratio of the second to the first.
                Assert.Matches(new Regex($@"^\| {transport} 8 B 1:1 full[^|]* \| [\d.]+( K)? \| [\d.]+( K)? \| \d+\.\d+ \|$", RegexOptions.Multiline), table);
            }
        }

        Assert.Contains($"## {b} against {a}", stdout, StringComparison.Ordinal);
        Assert.DoesNotContain($"## {c} against", stdout, StringComparison.Ordinal);
        Assert.Equal(stdout.TrimEnd(), File.ReadAllText(Path.Combine(results, "report.md")).TrimEnd());

        using var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(results, "report.json")));
        var machines = json.RootElement.GetProperty("machines").EnumerateArray().ToList();
        Assert.Equal([a, b, c], machines.Select(m => m.GetProperty("address").GetString()));
        Assert.Equal([a, b, c], machines.Select(m => m.GetProperty("name").GetString()));
        Assert.Equal(["COMPLETED", "COMPLETED", "FAILED"], machines.Select(m => m.GetProperty("state").GetString()));
        Assert.StartsWith("lost mid-suite after ", machines[2].GetProperty("error").GetString(), StringComparison.Ordinal);
        foreach (var machine in machines.Take(2))
        {
            var cells = machine.GetProperty("report").GetProperty("cells").EnumerateArray().ToList();
            Assert.Equal(["channels", "uds"], cells.Select(cell => cell.GetProperty("key").GetProperty("transport").GetString()));
            Assert.All(cells, cell => Assert.Equal(3, cell.GetProperty("summary").GetProperty("figures").GetProperty("repetitions").GetInt32()));
        }

        var rows = json.RootElement.GetProperty("side_by_side").EnumerateArray().ToList();
        Assert.Equal(2, rows.Count);
        Assert.All(rows, r => Assert.Equal([a, b], r.GetProperty("machines").EnumerateArray().Select(m => m.GetProperty("machine").GetString())));
        // Each finished machine's own report.json (what compare and --baseline read), none for the lost one.
        string[] files = [$"report-127.0.0.1_{first.Port}.json", $"report-127.0.0.1_{second.Port}.json", "report.html", "report.json", "report.md"];
        Assert.Equal(files.Order(StringComparer.Ordinal), Directory.GetFiles(results).Select(Path.GetFileName).Order(StringComparer.Ordinal));
        Assert.Equal(2, Reports.ReportFile.Load("report", Path.Combine(results, $"report-127.0.0.1_{first.Port}.json")).Cells.Count);
    }

    /// <summary>Ctrl+C stops the suite on every daemon (StopSuite), still reports what ran, and exits 130.</summary>
    [Fact]
    public async Task CtrlC_StopsTheSuiteOnEveryDaemon_AndExits130()
    {
        await using var first = await DaemonProcess.StartAsync();
        await using var second = await DaemonProcess.StartAsync();

        var (exitCode, stdout, log) = await RunAsync(
            ["run", "--daemons", $"{first.Address},{second.Address}", "--transports", "channels", "--payloads", "8,64,1024", "--duration", "3s", "--warmup", "0s",
             "--rate", "2000", "--wait", "block", "--out", Path.Combine(_directory, "interrupted")],
            async (process, _) =>
            {
                await WaitForSuiteAsync(first, s => s.State == SuiteState.Running);
                await WaitForSuiteAsync(second, s => s.State == SuiteState.Running);
                ProcessTree.Signal(process.Id, ProcessTree.SigInt);
            });

        Assert.True(exitCode == ExitCodes.Interrupted, $"exit code {exitCode}\n{log.Describe()}");
        foreach (var daemon in new[] { first, second })
        {
            var suite = Assert.Single((await daemon.Control.ListSuitesAsync(new ListSuitesRequest())).Suites);
            Assert.Equal(SuiteState.Stopped, suite.State);
            Assert.Matches(new Regex($@"^\| {Regex.Escape(daemon.Address)} \| {Regex.Escape(daemon.Address)} \| STOPPED \| {suite.Id} \|", RegexOptions.Multiline), stdout);
        }
    }

    /// <summary>
    /// A daemon that serves TLS and requires its token: --ca-file and --token-file reach it; without the token it
    /// refuses, and a run whose every machine failed exits 1, naming the refusal.
    /// </summary>
    [Fact]
    public async Task ADaemonWithTlsAndAToken_IsReachedWithCaFileAndTokenFile_AndRefusesARunWithoutTheToken()
    {
        Directory.CreateDirectory(_directory);
        var (certificate, key) = ControlPlaneSecurityTests.WriteTlsFiles(_directory);
        var tokenFile = ControlPlaneSecurityTests.WriteSecret(_directory, "token", Token + "\n");
        using var trusted = System.Security.Cryptography.X509Certificates.X509Certificate2.CreateFromPem(File.ReadAllText(certificate));
        await using var daemon = await DaemonProcess.StartAsync(new DaemonSettings
        {
            Configuration = [$"--IpcBench:ControlTokenFile={tokenFile}", "--IpcBench:RequireControlToken=true",
                $"--IpcBench:TlsCertificateFile={certificate}", $"--IpcBench:TlsKeyFile={key}"],
            Token = Token,
            TrustedCertificate = trusted,
        });
        string[] suite = ["--transports", "channels", "--payloads", "8", "--duration", "200ms", "--warmup", "0s", "--rate", "2000", "--wait", "block"];

        var (exitCode, stdout, log) = await RunAsync(
            ["run", "--daemons", daemon.Address, "--ca-file", certificate, "--token-file", tokenFile, .. suite, "--out", Path.Combine(_directory, "tls")]);
        Assert.True(exitCode == ExitCodes.Ok, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Matches(new Regex($@"^\| {Regex.Escape(daemon.Address)} \| {Regex.Escape(daemon.Address)} \| COMPLETED \|", RegexOptions.Multiline), stdout);
        Assert.DoesNotContain(Token, log.Text, StringComparison.Ordinal);

        var (refusedExit, refused, refusedLog) = await RunAsync(["run", "--daemons", daemon.Address, "--ca-file", certificate, .. suite, "--out", Path.Combine(_directory, "no-token")]);
        Assert.True(refusedExit == ExitCodes.Failed, $"exit code {refusedExit}\n{refusedLog.Describe()}");
        Assert.Contains($"- {daemon.Address} ({daemon.Address}) failed: StartSuite: Unauthenticated: ", refused, StringComparison.Ordinal);
        Assert.Contains("None of the 1 machine(s) finished.", refused, StringComparison.Ordinal);
    }

    private static async Task WaitForSuiteAsync(DaemonProcess daemon, Func<Suite, bool> condition)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var suites = await daemon.Control.ListSuitesAsync(new ListSuitesRequest(), deadline: DateTime.UtcNow.AddSeconds(10));
            if (suites.Suites.Any(condition))
            {
                return;
            }

            if (clock.Elapsed > TimeSpan.FromSeconds(60))
            {
                throw new TimeoutException($"no suite on {daemon.Address} reached the state waited for: {suites}");
            }

            await Task.Delay(100);
        }
    }

    /// <summary>
    /// The scenarios <paramref name="daemon"/> had done as `run`'s progress <paramref name="line"/> shows them (on stderr,
    /// a line per change off a terminal): "[2/6] channels ..." is one done, "RUNNING, 1 of 6 scenarios done" too; -1 for
    /// any other line.
    /// </summary>
    private static int ScenariosDoneSeenByRun(string line, string daemon)
    {
        var match = Regex.Match(line, $@"^\[err\] {Regex.Escape(daemon)} +(?:\[(?<next>\d+)/\d+\]|[A-Z]+, (?<done>\d+) of \d+ scenarios done)");
        return !match.Success ? -1
            : match.Groups["next"].Success ? int.Parse(match.Groups["next"].Value, CultureInfo.InvariantCulture) - 1
            : int.Parse(match.Groups["done"].Value, CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// BenchDaemon with <paramref name="arguments"/>; <paramref name="whileRunning"/> acts on it meanwhile (a kill, a
    /// Ctrl+C), with its output so far in the <see cref="OutputLog"/>.
    /// </summary>
    private async Task<(int ExitCode, string Stdout, OutputLog Log)> RunAsync(string[] arguments, Func<Process, OutputLog, Task>? whileRunning = null)
    {
        // As CliProcessTests' Ctrl+C test: through env --default-signal=INT, since a background test run inherits SIGINT ignored.
        var start = new ProcessStartInfo("env") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in (string[])["--default-signal=INT", RepoLayout.DaemonExecutable, .. arguments])
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment.Remove("IPCBENCH_CONTROL_TOKEN");
        var log = new OutputLog();
        using var process = log.Start(start);
        try
        {
            if (whileRunning is not null)
            {
                await whileRunning(process, log);
            }

            using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(120));
            await process.WaitForExitAsync(deadline.Token);
        }
        finally
        {
            output.WriteLine($"$ BenchDaemon {string.Join(' ', arguments)}\n{log.Describe(400)}");
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }

        process.WaitForExit();
        var stdout = string.Join('\n', log.Lines(0).Where(l => l.StartsWith("[out] ", StringComparison.Ordinal)).Select(l => l["[out] ".Length..]));
        return (process.ExitCode, stdout, log);
    }
}
