using System.Diagnostics;
using Google.Protobuf;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Agents kept warm between scenarios (IpcBench:WarmAgentIdleSeconds): handed on across transports, counted in each
/// result, never after a failure, gone after their idle time, and flat in descriptors, threads and heap over many
/// scenarios. The other tests start fresh agents for every scenario (TestDefaults). Every scenario is paced
/// (<see cref="Specs.Paced"/>): what agents hold and when they leave does not depend on how fast they ran. One daemon
/// and its two agents at a time, mostly waiting on scenarios' lifecycles (60 of them in a row for the flatness check):
/// the wait lane, where they take no time from the light lane, which runs LabRunTests instead.
/// </summary>
[Collection(WaitCollection.Name)]
public sealed class WarmAgentTests(ITestOutputHelper output)
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    private static string[] Warm(int idleSeconds) => [$"--IpcBench:WarmAgentIdleSeconds={idleSeconds}"];

    [Fact]
    public async Task ScenariosBackToBack_ShareTheirAgentsAcrossTransports_EachResultSaysHowManyItsAgentsServed_AndIdleOnesLeave()
    {
        await using var daemon = await DaemonProcess.StartAsync(Warm(idleSeconds: 3));
        using var log = daemon.LogTo(output);

        var first = await RunAsync(daemon, "uds");
        var second = await RunAsync(daemon, "tcp");
        var third = await RunAsync(daemon, "shm-ring");

        Assert.All(AgentsOf(first), a => Assert.Equal(0, a.ScenariosBefore));
        Assert.Equal(Pids(first), Pids(second));
        Assert.Equal(Pids(first), Pids(third));
        Assert.All(AgentsOf(second), a => Assert.Equal(1, a.ScenariosBefore));
        Assert.All(AgentsOf(third), a => Assert.Equal(2, a.ScenariosBefore));

        // Idle for longer than 3 s: they exit (their stream ends), and nothing of them is left.
        await Poll.UntilAsync(() => daemon.Agents().Count == 0, TimeSpan.FromSeconds(10),
            () => $"warm agents still there after their idle time: {string.Join("; ", daemon.Agents())}\n{daemon.Output.Describe()}");
        Assert.DoesNotContain("did not exit", daemon.Output.Text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task FreshAgents_StartForEveryScenario_AndAFailedScenariosAgentsAreNeverHandedOn()
    {
        await using (var fresh = await DaemonProcess.StartAsync(Warm(idleSeconds: 0)))
        {
            var a = await RunAsync(fresh, "uds");
            var b = await RunAsync(fresh, "uds");
            Assert.Empty(Pids(a).Intersect(Pids(b)));
            Assert.All(AgentsOf(b), p => Assert.Equal(0, p.ScenariosBefore));
        }

        await using var daemon = await DaemonProcess.StartAsync(Warm(idleSeconds: 30));
        using var log = daemon.LogTo(output);
        var warm = await RunAsync(daemon, "uds");

        // The warm agents serve an open-ended scenario; one of them is killed: the scenario fails, and the survivor,
        // whose scenario did not end well, is not handed on.
        var spec = Specs.Stream("uds", publishers: 1, subscribers: 2, duration: null, warmup: TimeSpan.Zero).Paced();
        var started = await daemon.StartScenarioAsync(spec);
        await daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
        ProcessTree.Signal(Pids(warm)[0], ProcessTree.SigKill);
        var failed = await daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));
        Assert.Equal(ScenarioState.Failed, failed.State);

        var next = await RunAsync(daemon, "uds");
        Assert.Empty(Pids(warm).Intersect(Pids(next)));
        Assert.All(AgentsOf(next), p => Assert.Equal(0, p.ScenariosBefore));
    }

    /// <summary>
    /// One pair of warm agents serves every scenario, four transports in turn. After each, the test reads what they hold
    /// idle: from /proc, descriptors other than loaded code (a transport's first scenario loads its assemblies) and
    /// threads other than the runtime's own (its pools grow and shrink by themselves); from their final report
    /// (/metrics), the live heap after the full collection that ends every scenario. Descriptors and threads of the last ten
    /// readings must stay at those of scenarios 31-40 (the fewest of each, so a moment's descriptor is not growth). It climbs by ~1 MiB an agent over
    /// the first 25 or so scenarios, then by 0-16 KB a scenario (three closed-loop runs: +0.1, +0.4, +0.6 MiB for the
    /// pair between scenarios 31-40 and 51-60; its cause is not yet found, docs/how-it-measures.md): the last ten
    /// readings must not exceed those of scenarios 31-40 by more than 1 MiB an agent, which a leak of 50 KB a scenario
    /// (a latency histogram is 270 KB) does.
    /// </summary>
    [Fact]
    public async Task ManyScenariosThroughOneWarmPair_LeaveTheirDescriptorsThreadsAndLiveHeapFlat()
    {
        // IPCBENCH_WARM_SCENARIOS: more, for a longer look (the closing notes' 200).
        int scenarios = int.TryParse(Environment.GetEnvironmentVariable("IPCBENCH_WARM_SCENARIOS"), out var more) && more > 60 ? more : 60;
        await using var daemon = await DaemonProcess.StartAsync(Warm(idleSeconds: 30));
        using var log = daemon.LogTo(output);
        var readings = new List<(int Descriptors, int Threads, double Heap)>();
        int[]? pids = null;
        string[] transports = ["uds", "tcp", "shm-ring", "zeromq"];
        for (int i = 0; i < scenarios; i++)
        {
            var done = await RunAsync(daemon, transports[i % transports.Length], TimeSpan.FromMilliseconds(100));
            pids ??= Pids(done);
            Assert.Equal(pids, Pids(done));
            Assert.All(AgentsOf(done), p => Assert.Equal(i, p.ScenariosBefore));
            var metrics = MetricsText.Parse(await Http.GetStringAsync(daemon.MetricsUrl));
            double heap = metrics.Of("ipcbench_agent_gc_live_bytes", done.Id).Sum(s => s.Value);
            readings.Add((pids.Sum(Descriptors), pids.Sum(Threads), heap));
        }

        string table = string.Join("\n", readings.Select((r, i) => $"{i + 1}: {r.Descriptors} descriptors, {r.Threads} threads, {r.Heap / 1048576:0.00} MiB live heap"));
        output.WriteLine(table);
        var early = readings.Skip(30).Take(10).ToList();
        var late = readings.TakeLast(10).ToList();
        // Descriptors and threads held by the pair for good show in every later reading; a moment's (a socket of the
        // scenario just ended, still closing) in one: a fresh-clone CI run (2026-11-30) read 55 once among 54s and failed
        // on it. So the fewest of the last ten against the fewest of 31-40 (as the soak's descriptor check, 9f9542a).
        Assert.True(late.Min(r => r.Descriptors) <= early.Min(r => r.Descriptors), "descriptors grew:\n" + table);
        Assert.True(late.Min(r => r.Threads) <= early.Min(r => r.Threads), "threads grew:\n" + table);
        Assert.True(late.Max(r => r.Heap) <= early.Max(r => r.Heap) + pids!.Length * (1 << 20), "the live heap grew:\n" + table);
        Assert.DoesNotContain("Not reusing", daemon.Output.Text, StringComparison.Ordinal);
    }

    /// <summary>`run` as it ships hands its agents on from scenario to scenario; --fresh-agents starts new ones for each.</summary>
    [Fact]
    public async Task Run_HandsItsAgentsOn_AndFreshAgentsStartsNewOnesForEveryScenario()
    {
        var directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "warm-" + Guid.NewGuid().ToString("N")[..10]);
        try
        {
            foreach (bool fresh in new[] { false, true })
            {
                var results = Path.Combine(directory, fresh ? "fresh" : "warm");
                var start = new ProcessStartInfo(RepoLayout.DaemonExecutable) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
                // The shipped default, not TestDefaults' fresh agents.
                start.Environment.Remove("IpcBench__WarmAgentIdleSeconds");
                string[] arguments = ["run", "--transports", "uds,tcp", "--payloads", "8", "--duration", "200ms", "--warmup", "0s", "--rate", "2000", "--wait", "block", "--out", results,
                    $"--IpcBench:RuntimeDirectory={Path.Combine(directory, "runtime")}", $"--IpcBench:DatabasePath={Path.Combine(directory, "scenarios.db")}"];
                foreach (var argument in fresh ? [.. arguments, "--fresh-agents"] : arguments)
                {
                    start.ArgumentList.Add(argument);
                }

                var log = new OutputLog();
                using (var process = log.Start(start))
                {
                    using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(120));
                    await process.WaitForExitAsync(deadline.Token);
                    Assert.True(process.ExitCode == 0, $"exit code {process.ExitCode}\n{log.Describe()}");
                }

                var export = JsonParser.Default.Parse<ScenarioExport>(File.ReadAllText(Path.Combine(results, "results.json")));
                var before = export.Scenarios.OrderBy(s => s.Scenario.StartedAt.ToDateTime())
                    .Select(s => s.Scenario.Stats.Processes.Where(p => p.Role == "agent").Select(p => p.ScenariosBefore).Distinct().Single()).ToList();
                Assert.Equal(fresh ? [0, 0] : [0, 1], before);
            }
        }
        finally
        {
            if (Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }

    private static async Task<Scenario> RunAsync(DaemonProcess daemon, string transport, TimeSpan? duration = null)
    {
        var spec = Specs.Stream(transport, publishers: 1, subscribers: 2, duration: duration ?? TimeSpan.FromMilliseconds(300), warmup: TimeSpan.Zero).Paced();
        var done = await daemon.RunScenarioAsync(spec, TimeSpan.FromSeconds(60));
        Assert.True(done.State == ScenarioState.Completed, daemon.Describe(done));
        Assert.True(done.Stats is { MessagesReceived: > 0, MessagesLost: 0, MessagesCorrupted: 0, MessagesDuplicated: 0 }, daemon.Describe(done));
        return done;
    }

    private static IEnumerable<ProcessStats> AgentsOf(Scenario scenario) => scenario.Stats.Processes.Where(p => p.Role == "agent");

    private static int[] Pids(Scenario scenario) => [.. AgentsOf(scenario).Select(p => p.Pid).Order()];

    private static int Descriptors(int pid) => Directory.GetFileSystemEntries($"/proc/{pid}/fd")
        .Count(fd => new FileInfo(fd).LinkTarget is not { } target || !(target.EndsWith(".dll", StringComparison.Ordinal) || target.Contains(".so", StringComparison.Ordinal)));

    /// <summary>Threads not named by the runtime (".NET TP Worker", ".NET BGC", ...): ours and the transports' libraries'.</summary>
    private static int Threads(int pid) => Directory.GetDirectories($"/proc/{pid}/task")
        .Count(task => !File.ReadAllText(Path.Combine(task, "comm")).StartsWith(".NET ", StringComparison.Ordinal));
}
