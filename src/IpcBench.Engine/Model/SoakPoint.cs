namespace IpcBench.Daemon.Model;

/// <summary>
/// One soak point as the judge closed it, <paramref name="At"/> into the measured window (the point's middle): the
/// mean delivered rate, the latency percentiles of its span (null without samples) and every process's resources. The
/// judge keeps only sums; these rows, persisted as they come, are what a soak's page draws against time.
/// </summary>
public sealed record SoakPoint(TimeSpan At, double DeliveredPerSecond, long? P50Ns, long? P99Ns, long? P999Ns, IReadOnlyList<SoakProcessValue> Processes);

/// <summary>One resource of one process at a point: the daemon (index -1) or an agent (its subscriber index).</summary>
public sealed record SoakProcessValue(string Role, int Index, ProcessResource Resource, double Value);
