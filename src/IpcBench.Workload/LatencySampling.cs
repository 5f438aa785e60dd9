namespace IpcBench.Workload;

/// <summary>
/// How many messages share one latency measurement. In a closed-loop stream, latency is the depth of the queue the
/// publisher keeps full, not a property of the transport, yet measuring it costs a clock read on each side and a
/// histogram record per message: a share of the harness's own cost that serves no result. Round trips and rate-limited
/// runs, whose latency is the result, measure every message.
/// </summary>
public static class LatencySampling
{
    /// <summary>One in 64: a 10 s closed-loop run still records hundreds of thousands of latencies.</summary>
    public const int ClosedLoopDefault = 64;

    public const int MaxEvery = 1_000_000;

    /// <summary>The sampling a run uses: <paramref name="requested"/>, or where that is 0 the default for its kind.</summary>
    public static int Resolve(int requested, bool roundTrip, double ratePerPublisher) =>
        requested > 0 ? requested : roundTrip || ratePerPublisher > 0 ? 1 : ClosedLoopDefault;
}
