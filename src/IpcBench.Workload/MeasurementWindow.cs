namespace IpcBench.Workload;

/// <summary>
/// When measurement starts, shared by the hot loops of one process. Messages sent (stamped) at or after
/// <see cref="FromNs"/> count toward throughput and latency; warmup traffic before it only toward the totals.
/// </summary>
public sealed class MeasurementWindow
{
    private long _fromNs = long.MaxValue;

    public long FromNs => Volatile.Read(ref _fromNs);

    public bool HasStarted => FromNs != long.MaxValue;

    public void Start(long fromNs) => Volatile.Write(ref _fromNs, fromNs);
}
