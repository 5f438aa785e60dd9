using System.Diagnostics;
using System.Text.Json;
using System.Text.RegularExpressions;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// README's control-plane block (every <c>$G … $D …</c> command under "The daemon and its control plane") run as
/// written, through bash, with the real grpcurl and jq, against a real daemon. Only what a reader would fill in is
/// filled in: the address, and the &lt;id&gt;-style placeholders from the answers of the commands before them. The
/// token and TLS examples of "Exposing the daemon" (docs/control-plane.md) are run by ControlPlaneSecurityTests. The
/// shared daemon: the block's limits are within its own, and the test stops what the block leaves running.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed partial class ReadmeGrpcurlExamplesTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private readonly string _workDirectory = Directory.CreateTempSubdirectory("ipcbench-readme-").FullName;

    public void Dispose() => Directory.Delete(_workDirectory, recursive: true);

    [GrpcurlFact]
    public async Task EveryGrpcurlCommandOfTheControlPlaneBlock_RunsAsWritten()
    {
        var commands = ControlPlaneBlock();
        Assert.True(commands.Count >= 20, $"README's control-plane block has {commands.Count} commands; did its first line change?\n{string.Join('\n', commands)}");

        var daemon = shared.Daemon;
        using var log = daemon.LogTo(output);
        try
        {
            await RunAsync(commands, daemon);
        }
        finally
        {
            // Leave nothing running: the block starts soaks and 5 s runs it does not wait for.
            foreach (var scenario in await daemon.ListScenariosAsync())
            {
                if (!ScenarioStates.IsFinished(scenario))
                {
                    await daemon.StopScenarioAsync(scenario.Id);
                }
            }
        }
    }

    private async Task RunAsync(List<string> commands, DaemonProcess daemon)
    {
        // Two finished runs of one spec: what the export's <id2> and the compare's <old>/<new> stand for. Side by side:
        // the commands only need them finished.
        var runs = await Task.WhenAll(Enumerable.Range(0, 2).Select(_ => daemon.RunScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Milliseconds(500)))));
        var (old, candidate) = (runs[0], runs[1]);
        var values = new Dictionary<string, string>
        {
            ["<id2>"] = old.Id,
            ["<old>"] = old.Id,
            ["<new>"] = candidate.Id,
            ["<next_page_token>"] = string.Empty,
        };

        foreach (var command in commands)
        {
            var filled = Placeholder().Replace(command, m => values.TryGetValue(m.Value, out var value)
                ? value
                : throw new Xunit.Sdk.XunitException($"README placeholder {m.Value} has no value yet in: {command}"));
            var running = BashAsync(filled, daemon.Address);
            if (command.Contains("/WatchScenario", StringComparison.Ordinal))
            {
                // The watch follows <id>, README's 10 s run after 2 s of warm-up, to its end: the test ends it once it
                // measures, so the watch shows its snapshots and the final one 12 s sooner. (GrpcurlTests watches a run
                // that ends by itself.)
                await daemon.WaitForAsync(values["<id>"], s => s.State == ScenarioState.Running && s.Stats is { MessagesReceived: > 0 },
                    TimeSpan.FromSeconds(60), "to run and receive");
                await daemon.StopScenarioAsync(values["<id>"]);
            }

            var (exitCode, stdout, stderr) = await running;
            output.WriteLine($"$ {filled}\n{Truncate(stdout)}{stderr}");
            Assert.True(exitCode == 0 && stderr.Length == 0, $"{filled}\nexited with {exitCode}: {stderr}\n{daemon.Output.Describe()}");

            // What the reader would copy from the answer into the next commands.
            if (command.Contains("/StartScenario", StringComparison.Ordinal))
            {
                using var started = JsonDocument.Parse(stdout);
                values["<id>"] = started.RootElement.GetProperty("id").GetString()!;
            }
            else if (command.Contains("/ListScenarios", StringComparison.Ordinal) && stdout.Length > 0)
            {
                using var page = JsonDocument.Parse(stdout);
                if (page.RootElement.TryGetProperty("next_page_token", out var token))
                {
                    values["<next_page_token>"] = token.GetString()!;
                }
            }
        }

        // The export commands wrote what README says they write.
        Assert.Contains("\"scenarios\"", await File.ReadAllTextAsync(Path.Combine(_workDirectory, "scenarios.json")), StringComparison.Ordinal);
        Assert.StartsWith("id,", await File.ReadAllTextAsync(Path.Combine(_workDirectory, "scenarios.csv")), StringComparison.Ordinal);
        Assert.StartsWith("scenario_id,", await File.ReadAllTextAsync(Path.Combine(_workDirectory, "series.csv")), StringComparison.Ordinal);
    }

    /// <summary>
    /// The commands of the code block that starts with <c>G="grpcurl -plaintext"; D=…</c>, one per shell command: lines
    /// joined where a quote is still open or a line ends in a backslash, comments and blank lines dropped.
    /// </summary>
    private static List<string> ControlPlaneBlock()
    {
        var lines = File.ReadAllLines(Path.Combine(RepoLayout.Root, "README.md"));
        var start = Array.FindIndex(lines, l => l.StartsWith("G=\"grpcurl -plaintext\"; D=", StringComparison.Ordinal));
        Assert.True(start > 0, "README has no control-plane block starting with G=\"grpcurl -plaintext\"; D=");
        var commands = new List<string>();
        var pending = string.Empty;
        for (var i = start + 1; i < lines.Length && !lines[i].StartsWith("```", StringComparison.Ordinal); i++)
        {
            var line = lines[i];
            if (pending.Length == 0 && (line.TrimStart().StartsWith('#') || line.Trim().Length == 0))
            {
                continue;
            }

            pending = pending.Length == 0 ? line : pending + "\n" + line;
            if (pending.Count(c => c == '\'') % 2 == 0 && !pending.EndsWith('\\'))
            {
                commands.Add(pending);
                pending = string.Empty;
            }
        }

        return commands;
    }

    /// <summary>bash with README's G and D, grpcurl on the PATH, in a directory of its own (the exports write files).</summary>
    private async Task<(int ExitCode, string Stdout, string Stderr)> BashAsync(string command, string address)
    {
        var start = new ProcessStartInfo("bash", ["-euo", "pipefail", "-c", $"G=\"grpcurl -plaintext\"; D={address}\n{command}"])
        {
            WorkingDirectory = _workDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        start.Environment["PATH"] = GrpcurlDirectory() + ":" + Environment.GetEnvironmentVariable("PATH");
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        return (process.ExitCode, await stdout, await stderr);
    }

    /// <summary>A directory whose <c>grpcurl</c> is the located one, whatever $GRPCURL's file is called: README says <c>grpcurl</c>.</summary>
    private string GrpcurlDirectory()
    {
        var directory = Path.Combine(_workDirectory, ".bin");
        if (!Directory.Exists(directory))
        {
            Directory.CreateDirectory(directory);
            File.CreateSymbolicLink(Path.Combine(directory, "grpcurl"), GrpcurlLocator.Require());
        }

        return directory;
    }

    private static string Truncate(string text) => text.Length <= 2000 ? text : text[..2000] + $"… ({text.Length} characters)\n";

    [GeneratedRegex("<[a-z_0-9]+>")]
    private static partial Regex Placeholder();
}
