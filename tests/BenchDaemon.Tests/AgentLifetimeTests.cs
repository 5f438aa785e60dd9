using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Agents do not outlive their daemon: SIGKILLed, it takes every agent with it within 250 ms (docs/operations.md's promise), busy
/// or idle. And the .NET runtime's diagnostic files (debugger pipes, diagnostic sockets) of processes that died without
/// removing them — its own killed agents, a killed predecessor — are removed by the daemon; a live process's are kept.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class AgentLifetimeTests(ITestOutputHelper output) : IDisposable
{
    private const int AgentsGoneWithinMs = 250;

    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "lifetime-" + Guid.NewGuid().ToString("N")[..10]);

    /// <summary>A private TMPDIR: the daemon's and its agents' diagnostic files land there, apart from everyone else's.</summary>
    private string TempDirectory => Path.Combine(_directory, "tmp");

    private DaemonSettings Setup => new()
    {
        RuntimeBase = Path.Combine(_directory, "runtime"),
        DatabasePath = Path.Combine(_directory, "state", "scenarios.db"),
        Environment = new Dictionary<string, string?> { ["TMPDIR"] = TempDirectory },
    };

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    /// <summary>
    /// One daemon's life and death tells both stories: an agent of its killed in passing (its files go once it is reaped),
    /// then the daemon itself SIGKILLed with busy and idle agents (they must go within 250 ms, and the daemon's files
    /// stay behind), then its successor's start-up removing what the dead left.
    /// </summary>
    [Fact]
    public async Task DaemonKilled_EveryAgentIsGoneWithin250Ms_BusyOrIdle_AndDiagnosticFilesOfTheDeadAreRemoved_ThoseOfLiveProcessesKept()
    {
        Directory.CreateDirectory(TempDirectory);
        int livePid = Environment.ProcessId;
        var liveFile = Path.Combine(TempDirectory, $"dotnet-diagnostic-{livePid}-1-socket");
        int predecessorPid;
        await using (var first = await DaemonProcess.StartAsync(Setup))
        {
            using var log = first.LogTo(output);
            predecessorPid = first.Pid;
            // Busy agents (spinning in a closed loop) and idle ones (blocked in a read between rate-limited messages),
            // and a third scenario whose agent is killed.
            var busy = await first.StartScenarioAsync(Specs.Stream("shm-ring", 1, 2, duration: null).With(s => s.WaitStrategy = WaitStrategy.Spin));
            var idle = await first.StartScenarioAsync(Specs.Stream("uds", 1, 2, duration: null)
                .With(s => { s.RatePerPublisher = 1000; s.WaitStrategy = WaitStrategy.Block; }));
            var killed = await first.StartScenarioAsync(Specs.Stream("uds", 1, 2, duration: null)
                .With(s => { s.RatePerPublisher = 1000; s.WaitStrategy = WaitStrategy.Block; }));
            foreach (var id in (string[])[busy.Id, idle.Id, killed.Id])
            {
                await first.WaitForAsync(id, s => s.State == ScenarioState.Running && s.LastInterval is not null, TimeSpan.FromSeconds(30), "to run a tick");
            }

            var victim = first.AgentsOf(killed.Id)[0];
            Assert.NotEmpty(DiagnosticFilesOf(victim.Pid));

            // A killed process leaves its files; the daemon that launched it removes them once it has reaped it.
            ProcessTree.Signal(victim.Pid, ProcessTree.SigKill);
            await Poll.UntilAsync(() => DiagnosticFilesOf(victim.Pid).Count == 0, TimeSpan.FromSeconds(10),
                () => $"the killed agent's diagnostic files survived: {string.Join(", ", DiagnosticFilesOf(victim.Pid))}");
            // Its scenario fails and its other agent goes with it; the other two scenarios' four keep running.
            await first.WaitUntilFinishedAsync(killed.Id, TimeSpan.FromSeconds(30));
            await Poll.UntilAsync(() => first.AgentsOf(killed.Id).Count == 0, TimeSpan.FromSeconds(10),
                () => $"agents of the failed scenario still running: {string.Join("; ", first.AgentsOf(killed.Id))}");

            // Files named for a live process (this one) must survive the next daemon's start; those of a pid no process has must not.
            await File.WriteAllTextAsync(liveFile, string.Empty);
            await File.WriteAllTextAsync(Path.Combine(TempDirectory, "clr-debug-pipe-999999999-1-in"), string.Empty);
            Assert.NotEmpty(DiagnosticFilesOf(predecessorPid));

            var agents = first.Agents();
            Assert.True(agents.Count == 4, $"Expected 4 agent children, found: {string.Join("; ", agents)}");
            var daemonEntry = ProcessTree.Read(first.Pid)!;
            double daemonGoneMs = -1;
            var clock = Stopwatch.StartNew();
            ProcessTree.Signal(first.Pid, ProcessTree.SigKill);
            var goneAfterMs = new Dictionary<int, double>();
            while (goneAfterMs.Count < agents.Count && clock.ElapsedMilliseconds < 5_000)
            {
                if (daemonGoneMs < 0 && !daemonEntry.IsAlive)
                {
                    daemonGoneMs = clock.Elapsed.TotalMilliseconds;
                }

                foreach (var agent in agents.Where(a => !goneAfterMs.ContainsKey(a.Pid) && !a.IsAlive))
                {
                    goneAfterMs[agent.Pid] = clock.Elapsed.TotalMilliseconds;
                }

                Thread.Sleep(1);
            }

            var report = string.Join("; ", agents.Select(a =>
                goneAfterMs.TryGetValue(a.Pid, out var ms) ? string.Create(CultureInfo.InvariantCulture, $"{a.Pid} gone after {ms:0.0} ms") : $"{a.Pid} still running"));
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"SIGKILL to daemon {first.Pid} (a zombie after {daemonGoneMs:0.0} ms): {report}"));
            output.WriteLine($"diagnostic files the agents left: {agents.Sum(a => DiagnosticFilesOf(a.Pid).Count)}");
            Assert.True(goneAfterMs.Count == agents.Count && goneAfterMs.Values.Max() <= AgentsGoneWithinMs,
                $"every agent must be gone within {AgentsGoneWithinMs} ms of its daemon's SIGKILL: {report}");
        }

        Assert.NotEmpty(DiagnosticFilesOf(predecessorPid));
        await using var second = await DaemonProcess.StartAsync(Setup);
        using var secondLog = second.LogTo(output);
        Assert.Empty(DiagnosticFilesOf(predecessorPid));
        Assert.Empty(DiagnosticFilesOf(999_999_999));
        Assert.True(File.Exists(liveFile), $"{liveFile} of live process {livePid} was removed");
        Assert.NotEmpty(DiagnosticFilesOf(second.Pid));
    }

    private List<string> DiagnosticFilesOf(int pid) =>
    [
        .. Directory.EnumerateFiles(TempDirectory, $"clr-debug-pipe-{pid}-*"),
        .. Directory.EnumerateFiles(TempDirectory, $"dotnet-diagnostic-{pid}-*"),
    ];
}
