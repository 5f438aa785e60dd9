using System.Diagnostics;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The agent link is the daemon's private business: served only on its Unix socket (mode 0600, in a 0700 directory),
/// never on the control port; and the control plane is not reachable through the agents' socket.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class AgentChannelTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    private string AgentSocket => Path.Combine(_daemon.RuntimeDirectory, "agent.sock");

    [Fact]
    public async Task AgentLink_OverTheControlPort_IsUnimplemented()
    {
        var report = await Assert.ThrowsAsync<RpcException>(() => _daemon.Channel.UnaryAsync("/ipcbench.v1.AgentLink/Report",
            new AgentReport { ScenarioId = "x", AgentIndex = 0, Token = "guess" }, ReportAck.Parser));
        var attach = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var unused in _daemon.Channel.ServerStreamingAsync("/ipcbench.v1.AgentLink/Attach", new AttachRequest { ScenarioId = "x" }, AgentCommand.Parser))
            {
            }
        });

        Assert.All([report, attach], e =>
        {
            Assert.Equal(StatusCode.Unimplemented, e.StatusCode);
            Assert.Equal("Service ipcbench.v1.AgentLink is not served on this endpoint.", e.Status.Detail);
        });
    }

    [Fact]
    public async Task BenchControl_OverTheAgentSocket_IsUnimplemented()
    {
        using var channel = GrpcClients.Create("unix:" + AgentSocket);

        var e = await Assert.ThrowsAsync<RpcException>(() =>
            new BenchControl.BenchControlClient(channel).ListTransportsAsync(new ListTransportsRequest()).ResponseAsync);

        Assert.Equal(StatusCode.Unimplemented, e.StatusCode);
    }

    [Fact]
    public async Task AgentLink_OnItsSocket_StillRefusesAWrongToken()
    {
        using var channel = GrpcClients.Create("unix:" + AgentSocket);

        var e = await Assert.ThrowsAsync<RpcException>(() => new AgentLink.AgentLinkClient(channel).ReportAsync(
            new AgentReport { ScenarioId = "0123456789ab", AgentIndex = 0, Token = "guess" }).ResponseAsync);

        Assert.Equal(StatusCode.PermissionDenied, e.StatusCode);
    }

    [Fact]
    public async Task AgentSocket_Is0600_InA0700Directory_AsStatSeesThem()
    {
        Assert.Equal("600 socket", await StatAsync("%a %F", AgentSocket));
        Assert.Equal("700 directory", await StatAsync("%a %F", _daemon.RuntimeDirectory));
        Assert.Equal(await StatAsync("%u", _daemon.RuntimeDirectory), await StatAsync("%u", AgentSocket));
    }

    [GrpcurlFact]
    public async Task ControlPortReflection_DoesNotListTheAgentLink()
    {
        var start = new ProcessStartInfo(GrpcurlLocator.Require(), ["-plaintext", _daemon.Address, "list"]) { RedirectStandardOutput = true, RedirectStandardError = true };
        using var process = Process.Start(start)!;
        var stdout = await process.StandardOutput.ReadToEndAsync();
        var stderr = await process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync();

        Assert.True(process.ExitCode == 0, stderr);
        var services = stdout.Split('\n', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains("ipcbench.v1.BenchControl", services);
        Assert.DoesNotContain("ipcbench.v1.AgentLink", services);
    }

    /// <summary>
    /// A control plane on a Unix socket is still the control plane: listeners are told apart by which one a connection
    /// came in on, not by the kind of socket, so the agent link stays off it and agents still get theirs.
    /// </summary>
    [Fact]
    public async Task ControlAddressOnAUnixSocket_ServesTheControlPlane_ButNotTheAgentLink()
    {
        var socket = Path.Combine(Path.GetTempPath(), $"ipcbench-control-{Guid.NewGuid():N}.sock");
        try
        {
            await using var daemon = await DaemonProcess.StartAsync(new DaemonSettings { ControlSocket = socket });
            using var log = daemon.LogTo(output);

            Assert.Contains(await daemon.ListTransportsAsync(), t => t.Id == "uds");
            var e = await Assert.ThrowsAsync<RpcException>(() => new AgentLink.AgentLinkClient(daemon.Channel)
                .ReportAsync(new AgentReport { ScenarioId = "0123456789ab", AgentIndex = 0, Token = "guess" }).ResponseAsync);
            Assert.Equal(StatusCode.Unimplemented, e.StatusCode);
            Assert.Equal("Service ipcbench.v1.AgentLink is not served on this endpoint.", e.Status.Detail);

            var result = await daemon.RunScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Milliseconds(300)));
            new ScenarioExpectations(result, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
        }
        finally
        {
            File.Delete(socket);
        }
    }

    private static async Task<string> StatAsync(string format, string path)
    {
        var start = new ProcessStartInfo("stat", ["-c", format, path]) { RedirectStandardOutput = true, RedirectStandardError = true };
        using var process = Process.Start(start)!;
        var stdout = await process.StandardOutput.ReadToEndAsync();
        var stderr = await process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync();
        Assert.True(process.ExitCode == 0, $"stat {path}: {stderr}");
        return stdout.Trim();
    }
}
