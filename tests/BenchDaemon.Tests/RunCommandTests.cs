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

    [Fact]
    public async Task Run_UdsAndChannels_PrintsATableRowForEach_AndWritesACompletedJsonResultPerScenario()
    {
        var results = Path.Combine(_directory, "out");
        var (exitCode, stdout, log) = await RunDaemonAsync(TimeSpan.FromSeconds(90),
            "run", "--transports", "uds,channels", "--payloads", "64", "--duration", "500ms", "--warmup", "0s", "--out", results,
            $"--IpcBench:RuntimeDirectory={Path.Combine(_directory, "runtime")}");
        output.WriteLine(log.Describe());

        Assert.True(exitCode == 0, $"exit code {exitCode}\n{log.Describe()}");
        foreach (var transport in new[] { "uds", "channels" })
        {
            // The per-scenario table: | Transport | Payload | N:M | ... | State |
            Assert.Matches(new Regex($@"^\| {Regex.Escape(transport)} \| 64 B \| 1:1 \| full \| .* \| COMPLETED \|$", RegexOptions.Multiline), stdout);
        }

        // The throughput grid: one column per transport.
        Assert.Matches(new Regex(@"^\| Payload \| uds \| channels \|$", RegexOptions.Multiline), stdout);

        var files = Directory.GetFiles(results, "*.json").Order().ToList();
        Assert.Equal(2, files.Count);
        var scenarios = files.Select(f => JsonParser.Default.Parse<Scenario>(File.ReadAllText(f))).ToList();
        Assert.Equal(["channels", "uds"], scenarios.Select(s => s.Spec.Transport).Order());
        Assert.All(scenarios, s =>
        {
            Assert.Equal(ScenarioState.Completed, s.State);
            Assert.Equal(64, s.Spec.PayloadBytes);
            Assert.True(s.Stats is { MessagesReceived: > 0, MessagesLost: 0, MessagesCorrupted: 0 }, JsonFormatter.Default.Format(s));
        });
    }

    private static async Task<(int ExitCode, string Stdout, OutputLog Log)> RunDaemonAsync(TimeSpan timeout, params string[] arguments)
    {
        var start = new ProcessStartInfo(RepoLayout.DaemonExecutable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        var log = new OutputLog();
        using var process = log.Start(start);
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"BenchDaemon {string.Join(' ', arguments)} did not finish within {timeout.TotalSeconds:0} s.\n{log.Describe()}");
        }

        process.WaitForExit();
        var stdout = string.Join('\n', log.Lines(0).Where(l => l.StartsWith("[out] ", StringComparison.Ordinal)).Select(l => l["[out] ".Length..]));
        return (process.ExitCode, stdout, log);
    }
}
