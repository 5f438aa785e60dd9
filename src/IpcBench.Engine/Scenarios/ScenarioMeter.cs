using HdrHistogram;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// What one scenario measures: the measurement window (warmup excluded), the latency histogram in total and per tick
/// (each tick's also as an HdrHistogram log interval), daemon and agent CPU, and the counters the result is made of.
/// The tick thread writes; snapshots and scrapes read from other threads under <see cref="_gate"/>.
/// </summary>
internal sealed class ScenarioMeter(
    ResolvedSpec spec, ScenarioTopology topology, Action<HdrInterval> recordLatencyInterval, SoakSettings soak, Action<SoakPoint> recordSoakPoint)
{
    private readonly object _gate = new();
    private readonly LongHistogram _totalLatency = LatencyHistograms.Create();
    private readonly LongHistogram _latencyInterval = LatencyHistograms.Create();
    private readonly LongHistogram _senderLag = LatencyHistograms.Create();
    private readonly NoiseWatch _noise = new(() => [Environment.ProcessId, .. topology.Subscribers.Select(s => s.ProcessId).Where(pid => pid > 0)]);
    private readonly HistogramCodec _latencyCodec = new();
    private readonly BacklogTrend _backlog = new();
    private int _latencyIntervalIndex;
    private long _latencyIntervalStartMs;
    private long _startedNs;
    private long _measureFromNs;
    private long _measureToNs;
    private ProcessMetrics.Sample _tickDaemon;
    private double _tickAgentsCpuSeconds;
    private ProcessMetrics.Sample? _daemonAtStart;
    private ProcessMetrics.Sample? _daemonAtEnd;
    private JitActivity _daemonJitAtStart;
    private JitActivity? _daemonJitAtEnd;
    private bool? _codeSettled;
    private readonly SoakJudge _soak = new(soak, spec.OfferedMessagesPerSecond, () => ReadProcesses(topology), recordSoakPoint);
    private long _lastTickNs;

    // Each whole second of the measured window's msg/s, for the placement rule's step (written by the tick thread, read under _gate).
    private readonly RateSeries _measuredRates = new();

    /// <summary>Counts what publishers send inside the measurement window.</summary>
    public MeasurementWindow Window { get; } = new();

    /// <summary>Whether the warmup is over (the daemon's CPU is counted from then).</summary>
    public bool Measuring => _daemonAtStart is not null;

    /// <summary>
    /// The core-to-core probe before the run and after its measured window (ns) and the machine's placement classes, for
    /// the placement check (with the measured seconds' msg/s this meter keeps).
    /// </summary>
    public (long? BeforeNs, long? AfterNs, PlacementClasses Classes) Probes { get; set; } = (null, null, PlacementClasses.NotLearned);

    /// <summary>Others' CPU over the measured window so far, in percent of the machine.</summary>
    public double? NoisePercent => _noise.NoisePercent;

    /// <summary>Starts the clock now, in the warmup; the measured window begins with <see cref="BeginMeasuring"/>.</summary>
    public void Start(long nowNs)
    {
        _startedNs = nowNs;
        _tickDaemon = ProcessMetrics.Take();
        _tickAgentsCpuSeconds = topology.AgentsCpuSeconds;
        topology.StartWarmup();
        _latencyIntervalStartMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        _noise.WarmupStarted();
    }

    /// <summary>
    /// The warmup is over: messages stamped from <paramref name="nowNs"/> on are measured. <paramref name="codeSettled"/>:
    /// whether code generation had settled in every process (false: the time limit ended the wait; null: not waited for).
    /// </summary>
    public void BeginMeasuring(long nowNs, bool? codeSettled)
    {
        _measureFromNs = nowNs;
        _codeSettled = codeSettled;
        Window.Start(nowNs);
        topology.StartMeasurement(nowNs);
        _noise.MeasuringStarted();
        _daemonJitAtStart = JitActivity.Take();
        _daemonAtStart = ProcessMetrics.Take();
    }

    /// <summary>The measurement is over: publishers are about to stop.</summary>
    public void End()
    {
        _measureToNs = MonotonicClock.NowNs();
        _daemonAtEnd = ProcessMetrics.Take();
        _daemonJitAtEnd = JitActivity.Take();
        _noise.MeasuringEnded();
    }

    /// <summary>The second that just passed, as the live snapshot and the stored series show it.</summary>
    public IntervalSample Tick(long nowNs)
    {
        var latency = TakeLatencyInterval();
        RecordLatencyInterval(latency);
        if (Measuring)
        {
            _noise.Tick();
            if (_measureToNs == 0)
            {
                _backlog.Add(nowNs / 1e9, Backlog());
            }
        }

        double rate = topology.ReceiveRate;
        // A second that began with the measured window and ended inside it (the tick that opens the window reports the warmup's).
        bool wholeMeasuredSecond = _measureFromNs > 0 && _lastTickNs >= _measureFromNs && _measureToNs == 0;
        _lastTickNs = nowNs;
        if (Measuring && _measureToNs == 0)
        {
            _soak.Tick(MeasuredSeconds, rate, latency);
        }

        var daemon = ProcessMetrics.Take();
        double agentsCpu = topology.AgentsCpuSeconds;
        double seconds = (daemon.TakenAtNs - _tickDaemon.TakenAtNs) / 1e9;
        var interval = new IntervalSample(
            TimeSpan.FromTicks((nowNs - _startedNs) / 100),
            rate,
            rate * spec.PayloadBytes,
            StatsFormatting.ToLatency(latency, spec.RoundTrip),
            ProcessMetrics.CpuPercent(_tickDaemon, daemon),
            // Agents report once a second on their own clock: a tick may see one report more or fewer than the last.
            seconds > 0 ? Math.Max(0, agentsCpu - _tickAgentsCpuSeconds) / seconds * 100 : 0);
        _tickDaemon = daemon;
        _tickAgentsCpuSeconds = agentsCpu;
        lock (_gate)
        {
            _totalLatency.Add(latency);
            if (wholeMeasuredSecond)
            {
                _measuredRates.Add(rate);
            }
        }

        return interval;
    }

    /// <summary>Takes in the subscribers' last reports, after they finished.</summary>
    public void AddTail()
    {
        var tail = TakeLatencyInterval();
        lock (_gate)
        {
            // Into the totals, not into a misleading sub-second series point.
            _totalLatency.Add(tail);
        }

        if (tail.TotalCount > 0)
        {
            // The .hlog keeps it as the short interval it is: the log holds every value the result counts.
            RecordLatencyInterval(tail);
        }
    }

    /// <summary>Seconds measured so far (or in all, once the measurement ended).</summary>
    public double MeasuredSeconds
    {
        get
        {
            long fromNs = _measureFromNs;
            long toNs = _measureToNs > 0 ? _measureToNs : MonotonicClock.NowNs();
            return fromNs > 0 && toNs > fromNs ? (toNs - fromNs) / 1e9 : 0;
        }
    }

    public LatencyBuckets LatencyBuckets()
    {
        lock (_gate)
        {
            return _totalLatency.TotalCount == 0 ? Scenarios.LatencyBuckets.Empty : Scenarios.LatencyBuckets.From(_totalLatency);
        }
    }

    /// <summary>Rate-limited runs: every publisher's sender lag so far, as /metrics buckets; null in closed loop.</summary>
    public LatencyBuckets? SenderLagBuckets()
    {
        if (spec.RatePerPublisher <= 0)
        {
            return null;
        }

        lock (_gate)
        {
            _senderLag.Reset();
            topology.MergeSenderLagInto(_senderLag);
            return _senderLag.TotalCount == 0 ? Scenarios.LatencyBuckets.Empty : Scenarios.LatencyBuckets.From(_senderLag);
        }
    }

    /// <summary>The result as of now.</summary>
    public RunStats BuildStats()
    {
        var (counters, publishers, sent, expected) = ReadCounters();
        double measuredSeconds = MeasuredSeconds;
        LatencySummary latency;
        SenderLagSummary? senderLag = null;
        double[] measuredRates;
        int secondsPerRate;
        lock (_gate)
        {
            measuredRates = _measuredRates.ToArray();
            secondsPerRate = _measuredRates.SecondsPerPoint;
            latency = StatsFormatting.ToLatency(_totalLatency, spec.RoundTrip);
            if (spec.RatePerPublisher > 0)
            {
                _senderLag.Reset();
                topology.MergeSenderLagInto(_senderLag);
                long p99 = LatencyHistograms.Percentile(_senderLag, 99);
                senderLag = new SenderLagSummary(_senderLag.TotalCount, LatencyHistograms.Percentile(_senderLag, 50), p99,
                    LatencyHistograms.Max(_senderLag), _senderLag.TotalCount > 0 && SenderLagSummary.DominatesLatency(p99, latency));
            }
        }

        var now = ProcessMetrics.Take();
        var daemonStart = _daemonAtStart ?? now;
        var daemonEnd = _daemonAtEnd ?? now;
        var daemon = new ProcessUsage(ProcessUsage.DaemonRole, -1, Environment.ProcessId, daemonEnd.CpuSeconds - daemonStart.CpuSeconds,
            ProcessMetrics.CpuPercent(daemonStart, daemonEnd), (long)now.PeakRssBytes)
        {
            Jit = _daemonAtStart is null ? null : (_daemonJitAtEnd ?? JitActivity.Take()).Since(_daemonJitAtStart),
        };
        var stats = new RunStats(
            MessagesSent: sent,
            MessagesReceived: counters.Received,
            MessagesLost: Math.Max(0, Unreceived(expected, counters)),
            MessagesCorrupted: counters.Corrupted + publishers.Sum(p => p.BadEchoes),
            MessagesDuplicated: counters.Duplicated,
            MessagesExpected: expected,
            MessagesPerSecond: measuredSeconds > 0 ? counters.MeasuredReceived / measuredSeconds : 0,
            BytesPerSecond: measuredSeconds > 0 ? counters.MeasuredBytes / measuredSeconds : 0,
            MeasuredMessages: counters.MeasuredReceived,
            MeasuredDuration: TimeSpan.FromTicks((long)(measuredSeconds * TimeSpan.TicksPerSecond)),
            Latency: latency,
            Processes: [daemon, .. topology.Subscribers.Select(s => s.Process).OfType<ProcessUsage>()])
        {
            NoisePercent = _noise.NoisePercent,
            WarmupNoisePercent = _noise.WarmupNoisePercent,
            StealPercent = _noise.StealPercent,
            LoadAverage1m = _noise.LoadAverage1m,
            SenderLag = senderLag,
            WarmupRun = _measureFromNs > 0 ? TimeSpan.FromTicks((_measureFromNs - _startedNs) / 100) : null,
            CodeSettled = _measureFromNs > 0 ? _codeSettled : null,
        };
        var (before, after, classes) = Probes;
        return stats with
        {
            Validity = ValidityRules.Check(spec, stats, _backlog.Growth, new PlacementEvidence(before, after, classes, measuredRates) { SecondsPerRate = secondsPerRate }),
            // Once the measurement ended the drained count is the loss; before, the subscribers' gaps are (the rest is in flight).
            Soak = Soak(_measureToNs != 0 ? stats.MessagesLost : counters.Lost, stats.MessagesDuplicated, stats.MessagesCorrupted),
        };
    }

    /// <summary>The soak judgement so far (for /metrics): loss as the subscribers have counted it.</summary>
    public SoakSummary? Soak()
    {
        var (counters, publishers, _, _) = ReadCounters();
        return Soak(counters.Lost, counters.Duplicated, counters.Corrupted + publishers.Sum(p => p.BadEchoes));
    }

    /// <summary>Open-ended scenarios are soaks from their first tick; a timed one once it ran long enough to be judged.</summary>
    private SoakSummary? Soak(long lost, long duplicated, long corrupted) =>
        spec.Duration is null || _soak.Points >= SoakRules.MinimumPoints ? _soak.Judge(lost, duplicated, corrupted) : null;

    /// <summary>The daemon and every agent as a soak point reads them: live heap after the last gen2 collection, GC-committed memory, and /proc.</summary>
    private static List<SoakProcessReading> ReadProcesses(ScenarioTopology topology)
    {
        var readings = new List<SoakProcessReading>
        {
            new(ProcessUsage.DaemonRole, -1, GcReadings.LiveHeapBytes(), ProcessResources.Read(Environment.ProcessId), GcReadings.CommittedBytes()),
        };
        foreach (var subscriber in topology.Subscribers)
        {
            if (subscriber.ProcessId > 0 && subscriber.ProcessId != Environment.ProcessId)
            {
                var sample = subscriber.LatestProcessSample;
                readings.Add(new(ProcessUsage.AgentRole, subscriber.Index, sample is { GcLiveBytes: > 0 } ? sample.GcLiveBytes : null, ProcessResources.Read(subscriber.ProcessId),
                    sample is { GcCommittedBytes: > 0 } ? sample.GcCommittedBytes : null));
            }
        }

        return readings;
    }

    /// <summary>Deliveries sent and not received (queued, in flight or lost), as the subscribers' latest counters show them.</summary>
    private long Backlog()
    {
        var (counters, _, _, expected) = ReadCounters();
        return Unreceived(expected, counters);
    }

    /// <summary>Every subscriber's counters summed, every publisher's, what they sent and the deliveries that makes.</summary>
    private (ReceiverCounters Counters, PublisherMetrics[] Publishers, long Sent, long Expected) ReadCounters()
    {
        var counters = topology.Subscribers.Aggregate(default(ReceiverCounters), (sum, s) => sum + s.Counters);
        var publishers = topology.PublisherCounters();
        long sent = publishers.Sum(p => p.Sent);
        return (counters, publishers, sent, sent * spec.SubscribersPerPublisher);
    }

    /// <summary>Deliveries expected that no subscriber counted (a duplicate is not a delivery).</summary>
    private static long Unreceived(long expected, ReceiverCounters counters) => expected - (counters.Received - counters.Duplicated);

    /// <summary>Latency recorded since the previous call, in a histogram reused from tick to tick (one thread calls this).</summary>
    private LongHistogram TakeLatencyInterval()
    {
        var interval = _latencyInterval;
        interval.Reset();
        topology.DrainLatencyInto(interval);
        return interval;
    }

    /// <summary>Queues the interval's histogram, encoded as HdrHistogram logs carry it, with its wall-clock bounds.</summary>
    private void RecordLatencyInterval(LongHistogram interval)
    {
        long endMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        recordLatencyInterval(new HdrInterval(_latencyIntervalIndex++, _latencyIntervalStartMs, endMs, _latencyCodec.Encode(interval)));
        _latencyIntervalStartMs = endMs;
    }
}
