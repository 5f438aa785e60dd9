using System.Globalization;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A class fixture like <see cref="SharedDaemon"/> (same limits) that admits a scenario per cross-process transport at
/// once (<see cref="MaxCases"/>: every transport registered today, and one more), so a class runs one case on every
/// transport concurrently rather than one after another. Its tests leave it as they found it: nothing running when
/// they end.
/// </summary>
public sealed class ConcurrentDaemon : IAsyncLifetime
{
    /// <summary>The most scenarios a test may run at once on it.</summary>
    public const int MaxCases = 8;

    /// <summary>
    /// Twice <see cref="MaxCases"/>: a finished scenario holds its slot until its teardown ends, a moment after it
    /// reads COMPLETED, so the next test's cases may start beside the last ones' teardown.
    /// </summary>
    public const int MaxConcurrentScenarios = 2 * MaxCases;

    private DaemonProcess? _daemon;

    internal DaemonProcess Daemon => _daemon ?? throw new InvalidOperationException("The concurrent daemon is not running.");

    public async Task InitializeAsync() => _daemon = await DaemonProcess.StartAsync(
        TestDefaults.CodeFinalAtFirstCall,
        string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxPublishers={SharedDaemon.MaxPublishers}"),
        string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxSubscribers={SharedDaemon.MaxSubscribers}"),
        string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxPayloadBytes={SharedDaemon.MaxPayloadBytes}"),
        string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={MaxConcurrentScenarios}"));

    public async Task DisposeAsync()
    {
        if (_daemon is not null)
        {
            await _daemon.DisposeAsync();
        }
    }
}
