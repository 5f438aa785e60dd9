namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// The tests that start processes which spin, measure or count: the machine may have two cores, so one at a time, with
/// only <see cref="LightCollection"/>'s lane beside them (not DisableParallelization, which would run this lane after
/// the other instead of beside it).
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
public sealed class SharedDaemon : IAsyncLifetime
{
    /// <summary>Limits lower than the defaults, so validation tests know them and see configuration take effect.</summary>
    public const int MaxPublishers = 8;
    public const int MaxSubscribers = 6;
    public const int MaxPayloadBytes = 1024 * 1024;

    private DaemonProcess? _daemon;

    internal DaemonProcess Daemon => _daemon ?? throw new InvalidOperationException("The shared daemon is not running.");

    public async Task InitializeAsync() => _daemon = await DaemonProcess.StartAsync(
        TestDefaults.CodeFinalAtFirstCall,
        $"--IpcBench:MaxPublishers={MaxPublishers}",
        $"--IpcBench:MaxSubscribers={MaxSubscribers}",
        $"--IpcBench:MaxPayloadBytes={MaxPayloadBytes}");

    public async Task DisposeAsync()
    {
        if (_daemon is not null)
        {
            await _daemon.DisposeAsync();
        }
    }
}
