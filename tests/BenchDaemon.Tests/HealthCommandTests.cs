using IpcBench.Daemon.Cli;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using static IpcBench.Daemon.Tests.Infrastructure.DeployFiles;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// `BenchDaemon health`, what docker-compose.yml's healthcheck runs in the container: exit 0 only when the daemon
/// answers SERVING. Run as the real executable, as Docker runs it.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class HealthCommandTests(SharedDaemon shared)
{
    /// <summary>A control address as the daemon listens on it; the check connects where that reaches it from this machine.</summary>
    [Theory]
    [InlineData("0.0.0.0:50051", "http://127.0.0.1:50051/")]
    [InlineData("[::]:50051", "http://[::1]:50051/")]
    [InlineData("127.0.0.1:9", "http://127.0.0.1:9/")]
    [InlineData("http://localhost:50051", "http://localhost:50051/")]
    [InlineData("https://ipcbench.lab.example:50051", "https://ipcbench.lab.example:50051/")]
    public void Target_OfAControlAddress_IsWhereACheckOnThisMachineConnects(string address, string expected) =>
        Assert.Equal(expected, HealthCommand.Target(address)?.ToString());

    [Theory]
    [InlineData("unix:/run/ipcbench/control.sock")]
    [InlineData("ftp://127.0.0.1:21")]
    [InlineData("127.0.0.1:50051/some/path")]
    public void Target_OfAnythingElse_IsNone(string address) => Assert.Null(HealthCommand.Target(address));

    [Fact]
    public async Task Health_OfARunningDaemon_IsServing_ForTheDaemonAndItsControlService_ButNotForAnUnknownService()
    {
        var address = shared.Daemon.Address;
        var (exitCode, stdout, stderr) = await RunAsync(RepoLayout.DaemonExecutable, "health", "--address", address);
        Assert.True(exitCode == 0, $"exit code {exitCode}\n{stderr}");
        Assert.Equal($"http://{address}/: SERVING\n", stdout);

        var (controlExit, control, _) = await RunAsync(RepoLayout.DaemonExecutable, "health", "--address", address, "--service", BenchControl.Descriptor.FullName);
        Assert.True(controlExit == 0, control);

        var (unknownExit, _, unknown) = await RunAsync(RepoLayout.DaemonExecutable, "health", "--address", address, "--service", "ipcbench.v1.Nope");
        Assert.Equal(1, unknownExit);
        Assert.Contains("NotFound: the daemon reports no service 'ipcbench.v1.Nope'", unknown, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Health_WithNothingListening_Exits1_AndABadAddressOrTimeout2()
    {
        // A port that was free a moment ago: the check must fail, not hang, within its own deadline.
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        var port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        var started = System.Diagnostics.Stopwatch.StartNew();
        var (exitCode, stdout, stderr) = await RunAsync(RepoLayout.DaemonExecutable, "health", "--address", $"127.0.0.1:{port}", "--timeout", "3");
        Assert.True(exitCode == 1, $"exit code {exitCode}\n{stdout}{stderr}");
        Assert.Contains("Unavailable", stderr, StringComparison.Ordinal);
        Assert.True(started.Elapsed < TimeSpan.FromSeconds(10), $"took {started.Elapsed}");

        Assert.Equal(2, (await RunAsync(RepoLayout.DaemonExecutable, "health", "--address", "unix:/tmp/x.sock")).ExitCode);
        Assert.Equal(2, (await RunAsync(RepoLayout.DaemonExecutable, "health", "--timeout", "0")).ExitCode);
    }
}
