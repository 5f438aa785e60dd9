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
/// processes start their own <see cref="DaemonProcess"/>.
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

    private protected override Task<DaemonProcess> StartAsync() => DaemonProcess.StartAsync(TestDefaults.CodeFinalAtFirstCall, Limits);
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
