using HdrHistogram;
using IpcBench.Daemon.Model;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Subscribers;

/// <summary>
/// The scenario runner's view of one subscriber, whether it runs in an agent process or (for in-process transports)
/// on threads of the daemon.
/// </summary>
public abstract class SubscriberHandle(int index) : IAsyncDisposable
{
    private readonly object _latencyGate = new();
    private readonly LongHistogram _pendingLatency = LatencyHistograms.Create();
    private long _rateCount;
    private long _rateNs;
    private double _receiveRate;

    public int Index { get; } = index;

    /// <summary>How errors name this subscriber, e.g. "agent 2 (pid 4711)".</summary>
    public abstract string Name { get; }

    /// <summary>Completes when the subscriber is connected to all its publishers and receiving.</summary>
    public abstract Task Ready { get; }

    public abstract ReceiverCounters Counters { get; }

    /// <summary>Set when the subscriber process reported its own resource use.</summary>
    public virtual ProcessUsage? Process => null;

    /// <summary>The process the subscriber runs in when it is not the daemon's (an agent); 0 in-process.</summary>
    public virtual int ProcessId => 0;

    /// <summary>The subscriber process's latest raw sample (CPU, memory, GC since it started), for /metrics.</summary>
    public virtual ProcessSample? LatestProcessSample => null;

    /// <summary>Messages per second between this subscriber's two latest observations (its own clock, not the daemon's tick).</summary>
    public virtual double ReceiveRate => Volatile.Read(ref _receiveRate);

    /// <summary>
    /// When (monotonic ns) the subscriber last proved it is alive, for subscribers in other processes that report
    /// periodically; null for subscribers that cannot hang separately from the daemon.
    /// </summary>
    public virtual long? LastHeardNs => null;

    /// <summary>The publishers are starting: the warmup begins (an agent reports often from here, and is watched for silence).</summary>
    public abstract void StartWarmup();

    /// <summary>The measured window began at <paramref name="fromNs"/> (publishers mark its messages).</summary>
    public abstract void StartMeasurement(long fromNs);

    /// <summary>
    /// For a subscriber in a process of its own: the time its JIT had spent at its latest report and when that report
    /// arrived (monotonic ns), for the code-settling check; null in-process (the daemon's own reading covers it) or
    /// before its first report.
    /// </summary>
    public virtual (TimeSpan Jit, long ReportedAtNs)? JitTime => null;

    /// <summary>Lets the subscriber drain (up to <paramref name="drainTimeout"/>) and collects its final counters.</summary>
    public abstract Task FinishAsync(TimeSpan drainTimeout, CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();

    /// <summary>Adds the latency recorded since the previous call to <paramref name="into"/>.</summary>
    public virtual void DrainLatencyInto(HistogramBase into)
    {
        lock (_latencyGate)
        {
            into.Add(_pendingLatency);
            _pendingLatency.Reset();
        }
    }

    protected void ObserveReceived(long received, long nowNs)
    {
        if (_rateNs > 0 && nowNs > _rateNs)
        {
            Volatile.Write(ref _receiveRate, (received - _rateCount) / ((nowNs - _rateNs) / 1e9));
        }

        _rateCount = received;
        _rateNs = nowNs;
    }

    /// <summary>Keeps a reported interval, still encoded, until the next drain; throws <see cref="FormatException"/> when it cannot be read.</summary>
    protected void RecordLatency(ReadOnlySpan<byte> encodedInterval)
    {
        lock (_latencyGate)
        {
            HistogramCodec.AddTo(encodedInterval, _pendingLatency);
        }
    }
}
