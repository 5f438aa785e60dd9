namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Every test of this assembly: they start processes that spin and measure, and the machine may have two cores, so
/// none may run beside another.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
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
