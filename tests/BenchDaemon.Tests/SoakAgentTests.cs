using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The soak's leak rule on real agents: two daemons side by side, each running an open-ended uds soak whose agent is
/// BenchAgent plus a thread (tests/BenchDaemon.Tests/HeapAgent) that keeps 1 MiB a second on one and only churns
/// garbage (about 25 MB/s, paced) on the other. The leaking one is judged LEAKING by its agent's memory, its daemon not
/// at all; the churning one's agent never is. Points of 2 s (not the default 10); resources counted after the default
/// 60 s, because a fresh daemon's own memory grows for its first half minute or more (RssAnon 24 -> 32 MiB in 25 s of a
/// 2,000 msg/s uds soak, then +1 MiB in the next 35 s) and longer on a busy machine: counted from 30 s, the leaking
/// daemon's native memory read +11.2 MiB over 20 s beside the other lane's tests (2026-11-29), +3.5 and +5.9 MiB of
/// the 8 MiB floor alone. These tests wait, in a lane of their own (<see cref="WaitCollection"/>), so the minutes cost
/// no time. The churning daemon is not held to the rule. Each run prints every resource's fitted change, so the margins
/// are in the test's output.
/// </summary>
[Collection(WaitCollection.Name)]
public sealed class SoakAgentTests(ITestOutputHelper output)
{
    private const string HeapVariable = "IPCBENCH_TEST_AGENT_HEAP";

    private static readonly string HeapAgent = Path.Combine(RepoLayout.Root, "tests", "BenchDaemon.Tests", "HeapAgent", "bin",
        RepoLayout.Configuration, RepoLayout.TargetFramework, "HeapAgent.dll");

    /// <summary>
    /// SIGTERM mid-soak: the daemon stops the soak as StopScenario would and stores it before it exits, so after a
    /// restart GetScenario shows it STOPPED, judged up to the stop, with nothing lost of what it measured.
    /// </summary>
    [Fact]
    public async Task ASigTermMidSoak_KeepsItsJudgementUpToTheStop_AcrossARestart()
    {
        string directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "soak-" + Guid.NewGuid().ToString("N")[..10]);
        var setup = new DaemonSettings
        {
            RuntimeBase = Path.Combine(directory, "runtime"),
            DatabasePath = Path.Combine(directory, "state", "scenarios.db"),
            Configuration = ["--IpcBench:SoakPointSeconds=1", "--IpcBench:SoakResourceWarmupSeconds=5"],
        };
        try
        {
            Scenario judged;
            await using (var first = await DaemonProcess.StartAsync(setup))
            {
                using var log = first.LogTo(output);
                var soak = await first.StartScenarioAsync(Specs.Stream("uds", publishers: 1, subscribers: 2, duration: null, warmup: Specs.Milliseconds(500))
                    .With(s => s.RatePerPublisher = 200));
                judged = await first.WaitForAsync(soak.Id, s => s.Stats?.Soak is { Verdict: not SoakVerdict.Judging } j && j.Processes.Count == 3,
                    TimeSpan.FromSeconds(60), "a judged soak with its three processes");
                Assert.True(await first.TerminateAsync(TimeSpan.FromSeconds(15)), $"the daemon did not stop on SIGTERM\n{first.Output.Describe()}");
            }

            await using var second = await DaemonProcess.StartAsync(setup);
            var after = await second.GetScenarioAsync(judged.Id);
            Assert.Equal(ScenarioState.Stopped, after.State);
            Assert.Equal(0ul, after.Stats.MessagesLost);
            Assert.True(after.Stats.MessagesReceived >= judged.Stats.MessagesReceived, "what was received before the stop is kept");
            var soakAfter = after.Stats.Soak;
            Assert.NotNull(soakAfter);
            Assert.NotEqual(SoakVerdict.Judging, soakAfter.Verdict);
            Assert.True(soakAfter.JudgedOver.ToTimeSpan() >= judged.Stats.Soak.JudgedOver.ToTimeSpan(),
                $"judged over {soakAfter.JudgedOver} after the restart, {judged.Stats.Soak.JudgedOver} before the SIGTERM");
            Assert.Equal(3, soakAfter.Processes.Count);
        }
        finally
        {
            if (Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }

    [Fact]
    public async Task AnAgentKeeping1MiBASecond_IsLeaking_AndOneChurningGarbage_IsNot()
    {
        Assert.True(File.Exists(HeapAgent), $"{HeapAgent} is built with the tests");
        string[] settings = [$"--IpcBench:AgentPath={HeapAgent}", "--IpcBench:SoakPointSeconds=2"];
        var leaking = DaemonProcess.StartAsync(new Dictionary<string, string?> { [HeapVariable] = "leak" }, settings);
        var churning = DaemonProcess.StartAsync(new Dictionary<string, string?> { [HeapVariable] = "churn" }, settings);
        await using var leaker = await leaking;
        await using var churner = await churning;
        using var leakLog = leaker.LogTo(output);

        // Rate-limited, and low: the verdicts are of the agents' memory, which the HeapAgent thread moves whatever the
        // rate, and these two minutes run beside both other lanes (at 2,000 msg/s the pairs took a fifth of a core).
        var spec = Specs.Stream("uds", publishers: 1, subscribers: 1, duration: null, warmup: Specs.Milliseconds(500))
            .With(s => s.RatePerPublisher = 200);
        var leak = await leaker.StartScenarioAsync(spec);
        var churn = await churner.StartScenarioAsync(spec);

        var seen = new List<string>();
        var judged = await leaker.WaitForAsync(leak.Id, s => s.Stats?.Soak is { Verdict: SoakVerdict.Leaking }, TimeSpan.FromSeconds(180), "a LEAKING soak");
        var reasons = judged.Stats.Soak.Reasons;
        output.WriteLine("leak: " + string.Join("\n  ", reasons));
        PrintFits("leak", judged);
        // The leak is the agent's: its managed heap or (the heap's pages, first on a loaded machine) its resident memory.
        Assert.Contains(reasons, r => r.StartsWith("agent 0's managed heap since the start grew", StringComparison.Ordinal)
            || r.StartsWith("agent 0's resident memory since the start grew", StringComparison.Ordinal));
        Assert.DoesNotContain(reasons, r => r.StartsWith("daemon", StringComparison.Ordinal));

        // The churning soak, judged over at least as many resource points as the leak needed, and 10 more.
        int needed = judged.Stats.Soak.Processes.Single(p => p.Role == "agent").Resources[0].Trend.SinceStart.Points + 10;
        Scenario current;
        do
        {
            await Task.Delay(1000);
            current = await churner.GetScenarioAsync(churn.Id);
            var soak = current.Stats?.Soak;
            seen.Add($"{soak?.Verdict}: {string.Join("; ", soak?.Reasons ?? [])}");
            Assert.True(soak is not { Verdict: SoakVerdict.Losing }, "churn: " + seen[^1]);
            Assert.True(soak is null || !soak.Reasons.Any(r => r.StartsWith("agent", StringComparison.Ordinal)), "churn: " + seen[^1]);
        }
        while (current.Stats?.Soak?.Processes.SingleOrDefault(p => p.Role == "agent")?.Resources[0].Trend?.SinceStart?.Points < needed
            || current.Stats?.Soak?.Processes.Count is null or 0);

        output.WriteLine("churn: " + string.Join("\n  ", seen.Distinct()));
        // The margins: each resource's fitted change against the leak rule's floor, so a run shows how near it came.
        PrintFits("churn", current);

        var agent = current.Stats.Soak.Processes.Single(p => p.Role == "agent");
        var heap = agent.Resources.Single(r => r.Resource == SoakResource.ManagedHeapBytes);
        Assert.True(heap.Latest > 1 << 20, $"the churning agent's heap is read ({heap.Latest} bytes)");
        await Task.WhenAll(leaker.StopScenarioAsync(leak.Id), churner.StopScenarioAsync(churn.Id));
    }

    private void PrintFits(string soak, Scenario scenario)
    {
        foreach (var process in scenario.Stats.Soak.Processes)
        {
            foreach (var resource in process.Resources.Where(r => r.Trend?.SinceStart is not null))
            {
                var fit = resource.Trend.SinceStart;
                output.WriteLine($"{soak} {process.Role} {process.Index} {resource.Resource}: {fit.PerHour * fit.Span.ToTimeSpan().TotalHours / (1 << 20):+0.0;-0.0} MiB over {fit.Span.ToTimeSpan().TotalSeconds:0} s ({fit.Points} points)");
            }
        }
    }
}
