namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A class fixture for <see cref="LightCollection"/>'s classes that share one daemon, as <see cref="SharedDaemon"/> does
/// for the measuring lane (same limits), but started as it ships: its tests run only paced BLOCK scenarios
/// (<see cref="Specs.Paced"/>), which hold no rate to a bound, so compiling every method at its first call (2 s more per
/// start) buys them nothing. Its tests leave it as they found it: nothing running when they end.
/// </summary>
public sealed class LightDaemon : SharedDaemonFixture
{
    private protected override Task<DaemonProcess> StartAsync() => DaemonProcess.StartAsync(SharedDaemon.Limits);
}
