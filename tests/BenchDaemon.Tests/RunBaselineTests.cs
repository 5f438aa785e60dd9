using System.Text.RegularExpressions;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// `BenchDaemon run --baseline`: a run compared with an earlier one's report.json, in the light lane (channels paced with
/// BLOCK waits: the comparison's plumbing, not its figures, is the contract). The other `run` tests are
/// <see cref="RunCommandTests"/>.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class RunBaselineTests(ITestOutputHelper output) : IDisposable
{
    private readonly DaemonDirectory _state = new("run-baseline");

    private string Root => _state.Path;

    public void Dispose() => _state.Dispose();

    /// <summary>How a lab compares locally: the first run's report.json is the second run's --baseline.</summary>
    [Fact]
    public async Task Run_WithBaseline_PrintsTheComparison_AndABadBaselineFailsNamingTheOption()
    {
        var settings = _state.Settings;
        string[] common = ["run", "--transports", "channels", "--payloads", "64,1024", "--duration", "300ms", "--warmup", "0s", "--rate", "2000", "--wait", "block",
            $"--IpcBench:RuntimeDirectory={settings.RuntimeBase}", $"--IpcBench:DatabasePath={settings.DatabasePath}"];
        var first = Path.Combine(Root, "first");
        var (firstExit, _, firstLog) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120), [.. common, "--out", first]);
        Assert.True(firstExit == 0, $"exit code {firstExit}\n{firstLog.Describe()}");
        var baseline = Path.Combine(first, "report.json");
        Assert.True(File.Exists(baseline), "run --out wrote no report.json");

        var second = Path.Combine(Root, "second");
        var (exitCode, stdout, log) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(120), [.. common, "--out", second, "--baseline", baseline]);
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        Assert.Contains("## Compared with baseline `", stdout, StringComparison.Ordinal);
        Assert.Matches(new Regex(@"\*\*(SAME|IMPROVED|REGRESSED|INCONCLUSIVE)\*\* — Overall \1 at a threshold of ±5 %: .* of 2 cell\(s\) in both suites\."), stdout);
        Assert.Matches(new Regex(@"\| channels 1 KB 1:1 full[^|]* \| (SAME|IMPROVED|REGRESSED|INCONCLUSIVE) \| "), stdout);
        Assert.Contains("id=\"comparison-chart\"", File.ReadAllText(Path.Combine(second, "report.html")), StringComparison.Ordinal);

        var bad = Path.Combine(Root, "not-a-report.json");
        File.WriteAllText(bad, "{\"ids\":[]}");
        var (badExit, _, badLog) = await DaemonRun.RunAsync(TimeSpan.FromSeconds(60), [.. common, "--baseline", bad]);
        Assert.Equal(2, badExit);
        Assert.Contains($"--baseline {bad}: not an IpcBench report.json", badLog.Describe(), StringComparison.Ordinal);
    }
}
