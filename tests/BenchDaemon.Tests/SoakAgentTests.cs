using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The soak's leak rule on real agents: two daemons side by side, each running an open-ended uds soak whose agent is
/// BenchAgent plus a thread (tests/BenchDaemon.Tests/HeapAgent) that keeps 1 MiB a second on one and only churns
/// garbage on the other. The leaking one is judged LEAKING by its agent's managed heap; the churning one never is.
/// Points of 2 s (not the default 10) so it fits in a minute; SoakJudgeTests shows the default's three minutes.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SoakAgentTests(ITestOutputHelper output)
{
    private const string HeapVariable = "IPCBENCH_TEST_AGENT_HEAP";

    private static readonly string HeapAgent = Path.Combine(RepoLayout.Root, "tests", "BenchDaemon.Tests", "HeapAgent", "bin",
        RepoLayout.Configuration, RepoLayout.TargetFramework, "HeapAgent.dll");

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

        // Rate-limited: neither publisher takes a core the other daemon's agents and ticks need.
        var spec = Specs.Stream("uds", publishers: 1, subscribers: 1, duration: null, warmup: Specs.Milliseconds(500))
            .With(s => s.RatePerPublisher = 2000);
        var leak = await leaker.StartScenarioAsync(spec);
        var churn = await churner.StartScenarioAsync(spec);

        var seen = new List<string>();
        var judged = await leaker.WaitForAsync(leak.Id, s => s.Stats?.Soak is { Verdict: SoakVerdict.Leaking }, TimeSpan.FromSeconds(120), "a LEAKING soak");
        var reasons = judged.Stats.Soak.Reasons;
        output.WriteLine("leak: " + string.Join("\n  ", reasons));
        Assert.Contains(reasons, r => r.StartsWith("agent 0's managed heap since the start grew", StringComparison.Ordinal));

        // The churning soak, judged over at least as many resource points as the leak needed, and 10 more.
        int needed = judged.Stats.Soak.Processes.Single(p => p.Role == "agent").Resources[0].Trend.SinceStart.Points + 10;
        Scenario current;
        do
        {
            await Task.Delay(1000);
            current = await churner.GetScenarioAsync(churn.Id);
            var soak = current.Stats?.Soak;
            seen.Add($"{soak?.Verdict}: {string.Join("; ", soak?.Reasons ?? [])}");
            Assert.True(soak is not { Verdict: SoakVerdict.Leaking or SoakVerdict.Losing }, "churn: " + seen[^1]);
        }
        while (current.Stats?.Soak?.Processes.SingleOrDefault(p => p.Role == "agent")?.Resources[0].Trend?.SinceStart?.Points < needed
            || current.Stats?.Soak?.Processes.Count is null or 0);

        output.WriteLine("churn: " + string.Join("\n  ", seen.Distinct()));
        var agent = current.Stats.Soak.Processes.Single(p => p.Role == "agent");
        var heap = agent.Resources.Single(r => r.Resource == SoakResource.ManagedHeapBytes);
        Assert.True(heap.Latest > 1 << 20, $"the churning agent's heap is read ({heap.Latest} bytes)");
        await Task.WhenAll(leaker.StopScenarioAsync(leak.Id), churner.StopScenarioAsync(churn.Id));
    }
}
