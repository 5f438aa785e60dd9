using System.Text.RegularExpressions;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// `BenchDaemon run --soak`: paced (2,000 msg/s, BLOCK), judged on verdicts any load allows, and mostly waiting for
/// its 12 s, so in the light lane beside the measuring tests.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class RunSoakCommandTests(ITestOutputHelper output) : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "run-soak-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    /// <summary>
    /// `run --soak`: the cells side by side as one soak (two transports here, a point a second), a line per scenario,
    /// the verdicts at the end and soak.html with every scenario's points; the exit code says whether all held.
    /// </summary>
    [Fact]
    public async Task Run_Soak_RunsTheCellsSideBySide_PrintsTheirVerdicts_AndWritesTheSoakPage()
    {
        var results = Path.Combine(_directory, "soak");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120),
            "run", "--soak", "12s", "--transports", "channels,uds", "--payloads", "64", "--rate", "2000", "--wait", "block", "--warmup", "200ms", "--out", results,
            "--IpcBench:SoakPointSeconds=1", $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}",
            $"--IpcBench:DatabasePath={Path.Combine(_directory, "state", "scenarios.db")}");
        output.WriteLine(log.Describe());

        // 0: all held; 3: one drifted or leaked, which a loaded test machine may do in 12 s. Either way both were judged.
        Assert.True(exitCode is 0 or 3, $"exit code {exitCode}\n{log.Describe()}");
        var verdicts = Regex.Matches(stdout, @"^(channels|uds) [0-9a-f]{12} COMPLETED 00:00:1\d [0-9.]+ K msg/s, lost 0: (HOLDING|DRIFTING|LEAKING)", RegexOptions.Multiline);
        Assert.Equal(["channels", "uds"], verdicts.Select(m => m.Groups[1].Value).Order());
        Assert.Contains("Soaking 2 scenarios side by side", log.Describe(), StringComparison.Ordinal);
        string page = File.ReadAllText(Path.Combine(results, "soak.html"));
        Assert.Contains("Soak of 2 scenarios", page, StringComparison.Ordinal);
        Assert.Matches("\"points\":\\[\\{\"hours\":", page);
        Assert.True(File.Exists(Path.Combine(results, "results.json")), "results.json beside the page");
    }

    /// <summary>What a soak cannot be combined with is refused before anything starts, naming the option.</summary>
    [Fact]
    public async Task Run_Soak_WithOptionsASoakCannotHonour_IsAUsageError()
    {
        var (exitCode, _, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(30), "run", "--soak", "1h", "--duration", "2s", "--repetitions", "3");
        Assert.Equal(2, exitCode);
        Assert.Contains("--duration: not with --soak (--soak is the soak's length)", log.Describe(), StringComparison.Ordinal);
        Assert.Contains("--repetitions: not with --soak", log.Describe(), StringComparison.Ordinal);
        (exitCode, _, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(30), "run", "--soak", "0s");
        Assert.Equal(2, exitCode);
        Assert.Contains("--soak: '0s' is not a length above zero", log.Describe(), StringComparison.Ordinal);
    }
}
