using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The short soak CI runs: bench/soak.sh's tool against its own daemon, a 1:2 ALL_TO_ALL scenario per available
/// transport, 200 msg/s per publisher with BLOCK waits. It must pass its own checks, and the figures it wrote are
/// checked again here: zero loss, live heaps of the daemon and of each scenario's agents (after a forced full
/// collection) grown by at most LiveHeapGrowth's bound, no descriptor or /dev/shm growth, nothing left behind.
/// LiveHeapProbeTests shows that signal catching a real leak.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SoakTests(ITestOutputHelper output)
{
    [Fact]
    public async Task ShortSoak_OfEveryTransport_LosesNothing_AndGrowsNoMemoryDescriptorsOrSharedMemory()
    {
        var json = Path.Combine(Path.GetTempPath(), $"ipcbench-soak-{Guid.NewGuid():N}.json");
        try
        {
            // 1:2 per transport, 16 agents: at 2:4 its 32 agents kept 150-250 threads runnable for a minute beside the other
            // lanes (2026-11-29). Fan-out to many agents is CrossProcessScenarioTests'. Every transport at once, paced with
            // BLOCK waits: the leak, descriptor and /dev/shm checks ask for time, not pressure (closed-loop delivery on every
            // transport at once is CrossProcessScenarioTests', and bench/soak.sh soaks closed loop unless told). 10 s measured
            // at a sample a second keeps apart the two fives of clean descriptor samples its check compares (9f9542a).
            // 200 msg/s, at nice 10, with everything it starts. The soak runs beside two lanes at the default weight. At
            // nice 19 and 2,000 msg/s it fell behind whenever they kept both cores busy: in a hosted CI run (2026-11-30) its
            // /metrics went unanswered for 10 s three times and four transports' agents missed the daemon's 10 s heartbeat
            // ("sent no report for 12.5 s"), so their scenarios failed and counted what they had not received as lost. Beside
            // two nice-0 busy loops a nice-19 soak's daemon did not even serve within 30 s (at 200 and 2,000 msg/s alike);
            // at nice 10 both rates passed (132 and 140 s); beside one loop, nice 19 passed. Alone, 200 msg/s took 70 against
            // 83 CPU-s. The verdicts are of memory, descriptors, shared memory and loss, whatever the rate.
            var (exitCode, stdout, stderr) = await SoakTool.RunAsync(
                ["10s", "--warmup", "10s", "--parallel", "--rate", "200", "--wait", "block", "--topology", "1:2", "--json", json],
                TimeSpan.FromMinutes(8), nice: 10);
            output.WriteLine(stderr);
            output.WriteLine(stdout);
            Assert.True(exitCode == 0, $"The soak failed (exit code {exitCode}); its report is above.");

            using var report = JsonDocument.Parse(await File.ReadAllTextAsync(json));
            var root = report.RootElement;
            var results = root.GetProperty("results").EnumerateArray().ToList();
            var transports = results.Select(r => r.GetProperty("transport").GetString()).ToList();
            Assert.Superset(new HashSet<string?> { "channels", "named-pipes", "uds", "tcp", "shm-ring" }, transports.ToHashSet());
            Assert.Equal(200, root.GetProperty("options").GetProperty("ratePerPublisher").GetDouble());
            Assert.Equal((1, 2), (root.GetProperty("options").GetProperty("publishers").GetInt32(), root.GetProperty("options").GetProperty("subscribers").GetInt32()));
            foreach (var r in results)
            {
                string transport = r.GetProperty("transport").GetString()!;
                Assert.True(r.GetProperty("state").GetString() == "Stopped", $"{transport}: {r.GetProperty("state").GetString()} {r.GetProperty("error").GetString()}");
                Assert.True(r.GetProperty("received").GetUInt64() > 0, $"{transport}: nothing received");
                Assert.Equal("Block", r.GetProperty("waitStrategy").GetString());
                Assert.Equal(0UL, r.GetProperty("lost").GetUInt64() + r.GetProperty("corrupted").GetUInt64() + r.GetProperty("duplicated").GetUInt64());
                AssertLiveHeapBounded(root, transport, "daemon", r.GetProperty("daemonLiveFirst"), r.GetProperty("daemonLiveLast"));
                if (r.GetProperty("hasAgents").GetBoolean())
                {
                    AssertLiveHeapBounded(root, transport, "agents", r.GetProperty("agentsLiveFirst"), r.GetProperty("agentsLiveLast"));
                    Assert.True(r.GetProperty("agentDescriptorsLast").GetInt32() <= r.GetProperty("agentDescriptorsFirst").GetInt32(), $"{transport}: agents' descriptors grew");
                }

                Assert.True(r.GetProperty("daemonDescriptorsAfter").GetInt32() <= r.GetProperty("daemonDescriptorsBefore").GetInt32(), $"{transport}: daemon descriptors grew");
            }

            var before = root.GetProperty("before");
            var after = root.GetProperty("after");
            Assert.True(after.GetProperty("daemonDescriptors").GetInt32() <= before.GetProperty("daemonDescriptors").GetInt32(), "daemon descriptors grew over the soak");
            Assert.True(after.GetProperty("sharedMemoryUsedBytes").GetInt64() <= before.GetProperty("sharedMemoryUsedBytes").GetInt64() + (1 << 20), "/dev/shm usage grew over the soak");
            Assert.Equal(0, root.GetProperty("ringFilesLeft").GetInt32());
            Assert.Equal(0, root.GetProperty("agentsLeft").GetInt32());
        }
        finally
        {
            File.Delete(json);
        }
    }

    /// <summary>Both readings there, and within the soak's own bound (its check of that name passed).</summary>
    private static void AssertLiveHeapBounded(JsonElement root, string transport, string who, JsonElement first, JsonElement last)
    {
        Assert.True(first.ValueKind == JsonValueKind.Object && last.ValueKind == JsonValueKind.Object, $"{transport}: {who} live heap was not read twice");
        Assert.True(first.GetProperty("liveBytes").GetInt64() > 0, $"{transport}: {who} live heap read as empty");
        var checks = root.GetProperty("checks").EnumerateArray().Where(c => c.GetProperty("name").GetString()!.StartsWith(who == "daemon" ? "daemon live heap" : $"{transport}: agents live heap", StringComparison.Ordinal)).ToList();
        Assert.True(checks.Count > 0 && checks.All(c => c.GetProperty("passed").GetBoolean()),
            $"{transport}: {who} live heap: {string.Join("; ", checks.Select(c => c.GetProperty("detail").GetString()))}");
    }
}
