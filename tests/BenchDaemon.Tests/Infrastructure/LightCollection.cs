namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// The second of the assembly's two lanes: tests that neither spin nor hold a speed to a bound, one at a time, beside
/// <see cref="DaemonCollection"/>'s. Unit tests, Chromium over stored reports, and daemons whose scenarios are all paced
/// with BLOCK waits (<see cref="Specs.Paced"/>): contracts of states, files, logs, refusals, exit codes and spans hold at
/// 2,000 msg/s as they do closed loop, and a paced BLOCK scenario leaves the other lane its cores. SoakAgentTests wait
/// most of their 84 s (a soak's resources count after 30 s) on about a sixth of the machine, and a leak of 1 MiB/s
/// against an 8 MiB floor, or a churning agent's +1 MiB, does not depend on the CPU a test beside them takes. A test
/// that spins, runs closed loop, measures or counts machine-wide belongs to <see cref="DaemonCollection"/>;
/// TestLaneTests keeps every test class in one of the two.
/// </summary>
[CollectionDefinition(Name)]
public sealed class LightCollection
{
    public const string Name = "Light tests beside the daemons";
}
