using System.Diagnostics;
using System.Text.Json;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>The daemon as its users drive it: with the real grpcurl, through server reflection.</summary>
[Collection(DaemonCollection.Name)]
public sealed class GrpcurlTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [GrpcurlFact]
    public async Task List_ShowsBenchControl()
    {
        var stdout = await GrpcurlAsync([], "list");

        Assert.Contains("ipcbench.v1.BenchControl", stdout.Split('\n', StringSplitOptions.TrimEntries));
        Assert.Contains("grpc.health.v1.Health", stdout.Split('\n', StringSplitOptions.TrimEntries));
    }

    [GrpcurlFact]
    public async Task Describe_BenchControl_ShowsItsMethods()
    {
        var stdout = await GrpcurlAsync([], "describe", "ipcbench.v1.BenchControl");

        Assert.Contains("ipcbench.v1.BenchControl is a service", stdout);
        Assert.Contains("rpc StartScenario ( .ipcbench.v1.StartScenarioRequest ) returns ( .ipcbench.v1.StartScenarioResponse );", stdout);
        Assert.Contains("rpc WatchScenario ( .ipcbench.v1.WatchScenarioRequest ) returns ( stream .ipcbench.v1.Scenario );", stdout);
    }

    [GrpcurlFact]
    public async Task StartScenario_FromJson_ReturnsAnId_AndTheScenarioRuns()
    {
        var stdout = await GrpcurlAsync(["-d", """{"spec":{"transport":"uds","publishers":1,"subscribers":1,"payload_bytes":8,"duration":"1s"}}"""],
            "ipcbench.v1.BenchControl/StartScenario");

        using var json = JsonDocument.Parse(stdout);
        var id = json.RootElement.GetProperty("id").GetString();
        Assert.False(string.IsNullOrEmpty(id), stdout);
        Assert.Equal("uds", json.RootElement.GetProperty("scenario").GetProperty("spec").GetProperty("transport").GetString());

        var result = await _daemon.WaitUntilFinishedAsync(id!, TimeSpan.FromSeconds(30));
        new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
    }

    [GrpcurlFact]
    public async Task HealthCheck_IsServing()
    {
        var stdout = await GrpcurlAsync([], "grpc.health.v1.Health/Check");

        using var json = JsonDocument.Parse(stdout);
        Assert.Equal("SERVING", json.RootElement.GetProperty("status").GetString());
    }

    /// <summary>grpcurl -plaintext FLAGS ADDRESS COMMAND: the address goes between the flags and the method, list or describe.</summary>
    private async Task<string> GrpcurlAsync(string[] flags, params string[] command)
    {
        var start = new ProcessStartInfo(RepoLayout.Grpcurl)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in (string[])["-plaintext", .. flags, _daemon.Address, .. command])
        {
            start.ArgumentList.Add(argument);
        }

        string commandLine = "grpcurl " + string.Join(' ', start.ArgumentList);
        using var process = Process.Start(start) ?? throw new InvalidOperationException("grpcurl did not start.");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill();
            throw new TimeoutException($"{commandLine} did not finish within 30 s.");
        }

        output.WriteLine($"$ {commandLine}\n{await stdout}{await stderr}");
        Assert.True(process.ExitCode == 0, $"{commandLine} exited with {process.ExitCode}: {await stderr}\n{_daemon.Output.Describe()}");
        return await stdout;
    }
}

/// <summary>A fact that is skipped, saying where grpcurl was expected, when the binary is missing.</summary>
public sealed class GrpcurlFactAttribute : FactAttribute
{
    public GrpcurlFactAttribute()
    {
        if (!File.Exists(RepoLayout.Grpcurl))
        {
            Skip = $"grpcurl not found at {RepoLayout.Grpcurl}; these tests need the real binary.";
        }
    }
}
