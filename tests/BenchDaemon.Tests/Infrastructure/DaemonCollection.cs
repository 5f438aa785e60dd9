namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// The tests that start processes which spin, measure or count: the machine may have two cores, so one at a time, with
/// only <see cref="LightCollection"/>'s and <see cref="WaitCollection"/>'s lanes beside them (not DisableParallelization,
/// which would run the lanes one after the other instead of side by side).
/// </summary>
[CollectionDefinition(Name)]
public sealed class DaemonCollection : ICollectionFixture<SharedDaemon>
{
    public const string Name = "BenchDaemon processes";
}

/// <summary>
/// One daemon for the tests that leave it as they found it (nothing running when they end). Tests that kill or stop
/// processes start their own <see cref="DaemonProcess"/>. Its agents stay warm between scenarios for 30 s, as a
/// user's daemon keeps them: its tests read their agents from results, never from the process tree (a warm agent of
/// an earlier test would be there), and under <see cref="TestDefaults.CodeFinalAtFirstCall"/> each fresh agent cost
/// ~0.75 CPU-s to start (39 agents of a CPU-bound test run, 29 CPU-s, 2026-11-29).
/// </summary>
public sealed class SharedDaemon : SharedDaemonFixture
{
    /// <summary>Limits lower than the defaults, so validation tests know them and see configuration take effect.</summary>
    public const int MaxPublishers = 8;
    public const int MaxSubscribers = 6;
    public const int MaxPayloadBytes = 1024 * 1024;

    /// <summary>The limits above as configuration, for every fixture that shares them.</summary>
    public static readonly string[] Limits =
    [
        $"--IpcBench:MaxPublishers={MaxPublishers}",
        $"--IpcBench:MaxSubscribers={MaxSubscribers}",
        $"--IpcBench:MaxPayloadBytes={MaxPayloadBytes}",
    ];

    private protected override Task<DaemonProcess> StartAsync() =>
        DaemonProcess.StartAsync(TestDefaults.CodeFinalAtFirstCall, [.. Limits, "--IpcBench:WarmAgentIdleSeconds=30"]);
}

/// <summary>A daemon process started once for the tests that share it, and stopped after the last of them.</summary>
public abstract class SharedDaemonFixture : IAsyncLifetime
{
    private DaemonProcess? _daemon;

    internal DaemonProcess Daemon => _daemon ?? throw new InvalidOperationException($"{GetType().Name}'s daemon is not running.");

    public async Task InitializeAsync() => _daemon = await StartAsync();

    public async Task DisposeAsync()
    {
        if (_daemon is not null)
        {
            await _daemon.DisposeAsync();
        }
    }

    private protected abstract Task<DaemonProcess> StartAsync();
}
