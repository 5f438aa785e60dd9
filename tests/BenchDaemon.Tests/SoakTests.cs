using System.Diagnostics;
using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The short soak CI runs: bench/soak.sh's tool against its own daemon, a 2:4 ALL_TO_ALL scenario per available
/// transport. It must pass its own checks, and the figures it wrote are checked again here: zero loss, RSS growth
/// under 20 %, no descriptor or /dev/shm growth, nothing left behind.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SoakTests(ITestOutputHelper output)
{
    [Fact]
    public async Task ShortSoak_OfEveryTransport_LosesNothing_AndGrowsNoMemoryDescriptorsOrSharedMemory()
    {
        Assert.True(File.Exists(RepoLayout.SoakTool), $"The soak tool was not built at {RepoLayout.SoakTool}.");
        var json = Path.Combine(Path.GetTempPath(), $"ipcbench-soak-{Guid.NewGuid():N}.json");
        try
        {
            var start = new ProcessStartInfo("dotnet")
            {
                // Every transport at once, so a few minutes suffice; agents' RSS climbs for about a minute (JIT, GC budgets)
                // before it settles, hence the long warmup before the first tenth that growth is judged from.
                ArgumentList = { RepoLayout.SoakTool, "15s", "--warmup", "45s", "--parallel", "--daemon", RepoLayout.DaemonExecutable, "--json", json },
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
                AssertGrowthUnder20Percent(transport, "daemon RSS", r.GetProperty("daemonResidentBytesFirst").GetInt64(), r.GetProperty("daemonResidentBytesLast").GetInt64());
                if (r.GetProperty("hasAgents").GetBoolean())
                {
                    AssertGrowthUnder20Percent(transport, "agents' RSS", r.GetProperty("agentsResidentBytesFirst").GetInt64(), r.GetProperty("agentsResidentBytesLast").GetInt64());
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

    private static void AssertGrowthUnder20Percent(string transport, string what, long first, long last) =>
        Assert.True(first > 0 && last < first * 1.2, $"{transport}: {what} grew from {first} to {last} bytes (20 % allowed)");
}
