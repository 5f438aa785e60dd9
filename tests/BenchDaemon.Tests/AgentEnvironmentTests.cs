using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The runtime settings the daemon gives its agents (AgentLauncher): a small gen0 budget and dynamic PGO instrumenting
/// our code rather than the framework's precompiled code; a value the daemon's own environment sets is kept.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class AgentEnvironmentTests
{
    private const string Pgo = "DOTNET_TieredPGO_InstrumentOnlyHotCode";
    private const string Gen0 = "DOTNET_GCgen0size";

    [Fact]
    public async Task Agents_GetTheDaemonsRuntimeSettings()
    {
        await using var daemon = await DaemonProcess.StartAsync(new Dictionary<string, string?> { [Pgo] = null, [Gen0] = null });
        var environment = await AgentEnvironmentAsync(daemon);

        Assert.Equal("0", environment.GetValueOrDefault(Pgo));
        Assert.Equal("0x400000", environment.GetValueOrDefault(Gen0));
    }

    [Fact]
    public async Task AValueTheDaemonWasStartedWith_IsKept()
    {
        await using var daemon = await DaemonProcess.StartAsync(new Dictionary<string, string?> { [Pgo] = "1", [Gen0] = "0x800000" });
        var environment = await AgentEnvironmentAsync(daemon);

        Assert.Equal("1", environment.GetValueOrDefault(Pgo));
        Assert.Equal("0x800000", environment.GetValueOrDefault(Gen0));
    }

    /// <summary>An agent's environment as the kernel holds it (/proc/PID/environ), read while its scenario runs.</summary>
    private static async Task<Dictionary<string, string>> AgentEnvironmentAsync(DaemonProcess daemon)
    {
        var started = await daemon.StartScenarioAsync(Specs.Stream("uds", 1, 1, duration: null, warmup: Specs.Milliseconds(100)).Paced());
        try
        {
            await daemon.WaitForStateAsync(started.Id, ScenarioState.Running, TimeSpan.FromSeconds(30));
            var agent = ProcessTree.Descendants(daemon.Pid).First(p => p.IsAgent);
            return File.ReadAllText($"/proc/{agent.Pid}/environ").Split('\0', StringSplitOptions.RemoveEmptyEntries)
                .Select(entry => entry.Split('=', 2)).Where(kv => kv.Length == 2).ToDictionary(kv => kv[0], kv => kv[1]);
        }
        finally
        {
            await daemon.StopScenarioAsync(started.Id);
        }
    }
}
