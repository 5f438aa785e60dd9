namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// The second of the assembly's three lanes: tests that neither spin nor hold a speed to a bound, one at a time, beside
/// <see cref="DaemonCollection"/>'s. Unit tests, Chromium over stored reports, and daemons whose scenarios are all paced
/// with BLOCK waits (<see cref="Specs.Paced"/>): contracts of states, files, logs, refusals, exit codes and spans hold at
/// 2,000 msg/s as they do closed loop, and a paced BLOCK scenario leaves the other lane its cores. A test that spins,
/// runs closed loop, measures or counts machine-wide belongs to <see cref="DaemonCollection"/>; one that mostly waits
/// on the clock, to <see cref="WaitCollection"/>. TestLaneTests keeps every test class in one of the three.
/// </summary>
[CollectionDefinition(Name)]
public sealed class LightCollection
{
    public const string Name = "Light tests beside the daemons";
}
