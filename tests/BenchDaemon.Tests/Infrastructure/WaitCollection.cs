namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// The third lane: tests that spend minutes waiting on the clock with their processes taking a small share of one core
/// (SoakAgentTests: a soak's resources count only after 60 s, about a sixth of a core meanwhile; WarmAgentTests: one
/// daemon and two agents through 60 paced scenarios' lifecycles). In
/// <see cref="LightCollection"/> they held that lane for 137 of its 460 s while the machine had CPU to spare beside them
/// (13 % idle over the run, 2026-11-29); here they wait beside both other lanes. A test in this lane neither spins, nor
/// measures, nor counts machine-wide, nor starts more than a couple of processes at a time: it must not be the load the
/// measuring lane's bounds see.
/// </summary>
[CollectionDefinition(Name)]
public sealed class WaitCollection
{
    public const string Name = "Waiting tests beside both lanes";
}
