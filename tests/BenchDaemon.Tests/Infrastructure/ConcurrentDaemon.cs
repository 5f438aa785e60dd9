using System.Globalization;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A class fixture like <see cref="SharedDaemon"/> (same limits) that admits a scenario per cross-process transport at
/// once (<see cref="MaxCases"/>: every transport registered today, and one more), so a class runs one case on every
/// transport concurrently rather than one after another. Its tests leave it as they found it: nothing running when
/// they end. Every scenario starts fresh agents (TestDefaults), as tests that kill or look for agents need.
/// </summary>
public class ConcurrentDaemon : SharedDaemonFixture
{
    /// <summary>The most scenarios a test may run at once on it.</summary>
    public const int MaxCases = 8;

    /// <summary>
    /// Twice <see cref="MaxCases"/>: a finished scenario holds its slot until its teardown ends, a moment after it
    /// reads COMPLETED, so the next test's cases may start beside the last ones' teardown.
    /// </summary>
    public const int MaxConcurrentScenarios = 2 * MaxCases;

    private protected virtual IEnumerable<string> Configuration =>
        [.. SharedDaemon.Limits, string.Create(CultureInfo.InvariantCulture, $"--IpcBench:MaxConcurrentScenarios={MaxConcurrentScenarios}")];

    private protected sealed override Task<DaemonProcess> StartAsync() =>
        DaemonProcess.StartAsync(TestDefaults.CodeFinalAtFirstCall, [.. Configuration]);
}

/// <summary>
/// <see cref="ConcurrentDaemon"/> with agents kept warm between scenarios, as the daemon ships (for 30 s here, longer
/// than a test of its class): for a class whose tests read their agents from results only, never from the process
/// tree. CrossProcessScenarioTests start up to 21 agents a test, four tests in a row; under
/// <see cref="TestDefaults.CodeFinalAtFirstCall"/> each fresh agent cost ~0.75 CPU-s to start (70 agents, 52 CPU-s of a
/// CPU-bound test run, 2026-11-29), and a warm one serves the next test's case.
/// </summary>
public sealed class WarmConcurrentDaemon : ConcurrentDaemon
{
    private protected override IEnumerable<string> Configuration => [.. base.Configuration, "--IpcBench:WarmAgentIdleSeconds=30"];
}
