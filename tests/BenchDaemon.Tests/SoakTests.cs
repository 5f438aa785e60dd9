using System.Diagnostics;
using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Soak;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The short soak CI runs: bench/soak.sh's tool against its own daemon, a 2:4 ALL_TO_ALL scenario per available
/// transport. It must pass its own checks, and the figures it wrote are checked again here: zero loss, no live-heap
/// growth (daemon and agents, after a forced full collection: see LiveHeapGrowth), no descriptor or /dev/shm growth,
/// nothing left behind. RSS is in the report, not judged: it moves with GC budgets and mapped /dev/shm rings.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SoakTests(ITestOutputHelper output)
{
    [Fact]
    public async Task ShortSoak_OfEveryTransport_LosesNothing_AndGrowsNoLiveHeapDescriptorsOrSharedMemory()
    {
        Assert.True(File.Exists(RepoLayout.SoakTool), $"The soak tool was not built at {RepoLayout.SoakTool}.");
        var json = Path.Combine(Path.GetTempPath(), $"ipcbench-soak-{Guid.NewGuid():N}.json");
        try
        {
            var start = new ProcessStartInfo("dotnet")
            {
                // Every transport at once. The leak signal is the live heap after a forced full collection, which the
                // JIT and GC budgets that took RSS a minute to settle do not move: a short warmup (connections made,
                // pools filled) is enough before the first probe.
                ArgumentList = { RepoLayout.SoakTool, "15s", "--warmup", "5s", "--parallel", "--daemon", RepoLayout.DaemonExecutable, "--json", json },
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using var soak = Process.Start(start)!;
            var stdout = soak.StandardOutput.ReadToEndAsync();
            var stderr = soak.StandardError.ReadToEndAsync();
            using (var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(8)))
            {
                try
                {
                    await soak.WaitForExitAsync(timeout.Token);
                }
                catch (OperationCanceledException)
                {
                    soak.Kill(entireProcessTree: true);
                    throw;
                }
            }

            output.WriteLine(await stderr);
            output.WriteLine(await stdout);
            Assert.True(soak.ExitCode == 0, $"The soak failed (exit code {soak.ExitCode}); its report is above.");

            using var report = JsonDocument.Parse(await File.ReadAllTextAsync(json));
            var root = report.RootElement;
            var results = root.GetProperty("results").EnumerateArray().ToList();
            var transports = results.Select(r => r.GetProperty("transport").GetString()).ToList();
            Assert.Superset(new HashSet<string?> { "channels", "named-pipes", "uds", "tcp", "shm-ring" }, transports.ToHashSet());
            foreach (var r in results)
            {
                string transport = r.GetProperty("transport").GetString()!;
                Assert.True(r.GetProperty("state").GetString() == "Completed", $"{transport}: {r.GetProperty("error").GetString()}");
                Assert.True(r.GetProperty("received").GetUInt64() > 0, $"{transport}: nothing received");
                Assert.Equal(0UL, r.GetProperty("lost").GetUInt64() + r.GetProperty("corrupted").GetUInt64() + r.GetProperty("duplicated").GetUInt64());
                AssertLiveHeapDidNotGrow(transport, "daemon's", r.GetProperty("daemonLiveFirst"), r.GetProperty("daemonLiveLast"));
                if (r.GetProperty("hasAgents").GetBoolean())
                {
                    AssertLiveHeapDidNotGrow(transport, "agents'", r.GetProperty("agentsLiveFirst"), r.GetProperty("agentsLiveLast"));
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

    private static void AssertLiveHeapDidNotGrow(string transport, string what, JsonElement first, JsonElement last)
    {
        Assert.True(first.ValueKind == JsonValueKind.Object && last.ValueKind == JsonValueKind.Object, $"{transport}: the {what} live heap was not measured");
        long from = first.GetProperty("liveBytes").GetInt64();
        long to = last.GetProperty("liveBytes").GetInt64();
        Assert.True(from > 0 && to - from <= LiveHeapGrowth.MaxGrowthBytes, $"{transport}: the {what} live heap grew from {from} to {to} bytes");
    }
}
