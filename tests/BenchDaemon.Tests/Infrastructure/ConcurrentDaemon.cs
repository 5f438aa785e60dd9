using System.Globalization;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A class fixture like <see cref="SharedDaemon"/> (same limits) that admits a scenario per cross-process transport at
/// once (<see cref="MaxCases"/>: every transport registered today, and one more), so a class runs one case on every
/// transport concurrently rather than one after another. Its tests leave it as they found it: nothing running when
/// they end.
/// </summary>
public sealed class ConcurrentDaemon : SharedDaemonFixture
{
    /// <summary>The most scenarios a test may run at once on it.</summary>
    public const int MaxCases = 8;

    /// <summary>
    /// Twice <see cref="MaxCases"/>: a finished scenario holds its slot until its teardown ends, a moment after it
    /// reads COMPLETED, so the next test's cases may start beside the last ones' teardown.
    /// </summary>
    public const int MaxConcurrentScenarios = 2 * MaxCases;

    private protected override Task<DaemonProcess> StartAsync() => DaemonProcess.StartAsync(
        TestDefaults.CodeFinalAtFirstCall,
        [.. SharedDaemon.Limits, string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={MaxConcurrentScenarios}")]);
}
