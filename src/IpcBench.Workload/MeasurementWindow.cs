namespace IpcBench.Workload;

/// <summary>
/// When measurement starts, shared by the publishers of one scenario. Messages stamped at or after <see cref="FromNs"/>
/// are sent with MessageFlags.Measured and count toward throughput and latency; warmup traffic before it only toward the
/// totals. Receivers read the flag, not this window, so the daemon may start it at any moment.
/// </summary>
public sealed class MeasurementWindow
{
    private long _fromNs = long.MaxValue;

    public long FromNs => Volatile.Read(ref _fromNs);

    public bool HasStarted => FromNs != long.MaxValue;

    public void Start(long fromNs) => Volatile.Write(ref _fromNs, fromNs);
}
