using System.Diagnostics;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The command line as a shell sees it: exit codes, what goes to stdout and stderr, and where `run` writes. Parsing
/// itself is CliTests' (in process); these start the real executables, because the process is the point. The process,
/// not its figures: `run` is paced with BLOCK waits, so nothing spins and the class can run in the light lane.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class CliProcessTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Quick = TimeSpan.FromSeconds(60);

    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "cli-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    [Theory]
    [InlineData("run --payload 8", "'--payloads'")]
    [InlineData("serv", "'serve'")]
    [InlineData("run --repetitions 0", "--repetitions: '0' is not a whole number from 1 to 100")]
    [InlineData("run --payloads abc", "--payloads: 'abc'")]
    public async Task AUsageError_Exits2_NamingTheFixOnStderr_AndStartsNothing(string commandLine, string named)
    {
        var (exitCode, stdout, stderr) = await RunAsync(RepoLayout.DaemonExecutable, commandLine.Split(' '), Quick);

        Assert.True(exitCode == 2, $"exit code {exitCode}\n{stderr}");
        Assert.Contains(named, stderr, StringComparison.Ordinal);
        Assert.StartsWith("error: ", stderr, StringComparison.Ordinal);
        Assert.Equal(string.Empty, stdout);
    }

    /// <summary>
    /// `compare` judges two report.json files offline, as CompareSuites does, and gates a pipeline by its exit code: 3
    /// regressed, 4 inconclusive, 0 otherwise, 2 for a file it cannot read; the section on stdout, report.html on request.
    /// </summary>
    [Fact]
    public async Task Compare_OfTwoReports_PrintsTheSection_AndExitsByTheVerdict()
    {
        Directory.CreateDirectory(_directory);
        string Write(string name, Reports.SuiteReport report)
        {
            var path = Path.Combine(_directory, name + ".json");
            File.WriteAllText(path, Reports.JsonReport.Render(report));
            return path;
        }

        var baseline = ReportSamples.Matrix("baseline", ReportSamples.ComparedRepetitions);
        string before = Write("before", baseline);
        string regressed = Write("regressed", ReportSamples.Candidate(baseline));
        string same = Write("same", baseline with { SuiteId = "again" });
        var three = ReportSamples.Matrix("three", repetitions: 3);
        string threeBefore = Write("three-before", three);
        string threeAfter = Write("three-after", three with { SuiteId = "three-again" });
        string html = Path.Combine(_directory, "compared.html");

        var (regressedExit, stdout, stderr) = await RunAsync(RepoLayout.DaemonExecutable, ["compare", before, regressed, "--html", html], Quick);
        Assert.True(regressedExit == 3, $"exit code {regressedExit}\n{stderr}");
        Assert.StartsWith("## Compared with baseline `suite-0002`", stdout, StringComparison.Ordinal);
        Assert.Contains("| uds 1 KB 1:1 full | REGRESSED |", stdout, StringComparison.Ordinal);
        Assert.Contains("<td class=\"verdict regressed\">REGRESSED</td>", File.ReadAllText(html), StringComparison.Ordinal);

        Assert.Equal(0, (await RunAsync(RepoLayout.DaemonExecutable, ["compare", before, same], Quick)).ExitCode);
        Assert.Equal(4, (await RunAsync(RepoLayout.DaemonExecutable, ["compare", threeBefore, threeAfter], Quick)).ExitCode);
        // Two runs a side pooled (an interleaved A/B's rounds): six repetitions against six, enough for a verdict.
        string threeSlower = Write("three-slower", ReportSamples.Candidate(three));
        var (pooledExit, pooled, _) = await RunAsync(RepoLayout.DaemonExecutable, ["compare", $"{threeBefore},{threeAfter}", $"{threeSlower},{threeSlower}"], Quick);
        Assert.True(pooledExit == 3, $"exit code {pooledExit}\n{pooled}");
        Assert.StartsWith("## Compared with baseline `suite-0002+1`", pooled, StringComparison.Ordinal);
        var (missingExit, _, missing) = await RunAsync(RepoLayout.DaemonExecutable, ["compare", Path.Combine(_directory, "nope.json"), same], Quick);
        Assert.Equal(2, missingExit);
        Assert.StartsWith($"error: baseline {Path.Combine(_directory, "nope.json")}: ", missing, StringComparison.Ordinal);
        var (thresholdExit, _, threshold) = await RunAsync(RepoLayout.DaemonExecutable, ["compare", before, same, "--threshold", "0"], Quick);
        Assert.Equal((2, "error: --threshold: must be more than 0 and at most 1000; got 0"), (thresholdExit, threshold.Trim()));
    }

    /// <summary>
    /// A relative --out from the shell's directory, settings as --IpcBench:Key=value, the absolute path printed, and no
    /// ASP.NET Core noise (the data protection key ring warning) in a benchmark's output.
    /// </summary>
    [Fact]
    public async Task Run_WritesARelativeOutUnderTheWorkingDirectory_PrintsItAbsolute_AndNoDataProtectionWarning()
    {
        var workingDirectory = Path.Combine(_directory, "shell");
        Directory.CreateDirectory(workingDirectory);
        var (exitCode, stdout, stderr) = await RunAsync(RepoLayout.DaemonExecutable,
            ["run", "--transports", "channels", "--payloads", "8", "--duration", "200ms", "--warmup", "0s", "--rate", "2000", "--wait", "block",
             "--out", "rel/out", .. Settings()],
            TimeSpan.FromSeconds(120), workingDirectory);

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{stderr}");
        var expected = Path.Combine(workingDirectory, "rel", "out");
        Assert.True(File.Exists(Path.Combine(expected, "results.json")), $"no results.json in {expected}\n{stderr}");
        Assert.Contains($"results in {expected}", stderr, StringComparison.Ordinal);
        Assert.DoesNotContain("DataProtection", stdout + stderr, StringComparison.Ordinal);
        Assert.DoesNotContain("XML encryptor", stdout + stderr, StringComparison.Ordinal);
    }

    /// <summary>Ctrl+C stops `run` after the scenario in progress, keeps what ran, and exits 130 as shells expect.</summary>
    [Fact]
    public async Task Run_InterruptedByCtrlC_Exits130_AndKeepsTheResults()
    {
        var results = Path.Combine(_directory, "interrupted");
        var log = new OutputLog();
        // Through coreutils' env --default-signal=INT: a test run started in the background of a script inherits SIGINT
        // ignored, and .NET, as shells do, keeps an inherited SIG_IGN; the user at a terminal has it delivered.
        var start = StartInfo("env",
            ["--default-signal=INT", RepoLayout.DaemonExecutable,
                "run", "--transports", "channels", "--payloads", "8,64,1024", "--duration", "3s", "--warmup", "0s", "--rate", "2000", "--wait", "block",
                "--out", results, .. Settings()], null);
        using var process = log.Start(start);
        try
        {
            // Redirected, run prints a line per finished scenario: after the first, the second (3 s) is in progress.
            await Poll.UntilAsync(() => log.Text.Contains("[1/3]", StringComparison.Ordinal), Quick, () => log.Describe());
            ProcessTree.Signal(process.Id, ProcessTree.SigInt);
            using var deadline = new CancellationTokenSource(Quick);
            await process.WaitForExitAsync(deadline.Token);
        }
        finally
        {
            output.WriteLine(log.Describe());
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }

        Assert.Equal(130, process.ExitCode);
        Assert.True(File.Exists(Path.Combine(results, "results.json")), log.Describe());
    }

    [Theory]
    [InlineData("--daemon unix:/nowhere --scenario s --index 0", "'--daemon-pid'")]
    [InlineData("--daemon unix:/nowhere --scenario s --index 0 --daemon-pid 1 --speed 3", "'--speed'")]
    [InlineData("--daemon unix:/nowhere --scenario s --index x --daemon-pid 1", "--index: 'x'")]
    public async Task BenchAgent_WithAMissingUnknownOrBadArgument_Exits2_NamingIt(string commandLine, string named)
    {
        var agent = Path.Combine(RepoLayout.DaemonDirectory, "BenchAgent");

        var (exitCode, _, stderr) = await RunAsync(agent, commandLine.Split(' '), Quick);

        Assert.True(exitCode == 2, $"exit code {exitCode}\n{stderr}");
        Assert.Contains(named, stderr, StringComparison.Ordinal);
    }

    private string[] Settings() =>
        [$"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}"];

    private static ProcessStartInfo StartInfo(string fileName, IEnumerable<string> arguments, string? workingDirectory)
    {
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory ?? string.Empty,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }

    private async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan timeout,
        string? workingDirectory = null)
    {
        using var process = Process.Start(StartInfo(fileName, arguments, workingDirectory))!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{fileName} {string.Join(' ', arguments)} did not finish within {timeout.TotalSeconds:0} s.\n{await stderr}");
        }

        output.WriteLine($"$ {fileName} {string.Join(' ', arguments)}\n[exit {process.ExitCode}]\n{await stdout}\n{await stderr}");
        return (process.ExitCode, await stdout, await stderr);
    }
}
