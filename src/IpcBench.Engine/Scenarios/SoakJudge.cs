using HdrHistogram;
using IpcBench.Daemon.Model;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>How often a soak takes a point, and how many of them its sliding window holds (IpcBench:SoakPointSeconds, SoakWindowMinutes).</summary>
internal sealed record SoakSettings(TimeSpan Point, TimeSpan Window)
{
    /// <summary>Measured time whose resource readings the leak fits leave out (IpcBench:SoakResourceWarmupSeconds).</summary>
    public TimeSpan ResourceWarmup { get; init; } = TimeSpan.FromSeconds(60);

    public int WindowPoints => Math.Max(SoakRules.MinimumPoints, (int)(Window.Ticks / Point.Ticks));
}

/// <summary>One process as read at a point: its live heap after its last gen2 collection and its GC-committed memory (null: not known), and what /proc says.</summary>
internal sealed record SoakProcessReading(string Role, int Index, double? ManagedHeapBytes, ProcessResources? Resources, double? GcCommittedBytes = null);

/// <summary>
/// Judges a scenario while it runs, in constant memory: each measured tick's delivered rate and latency go into a point;
/// every <see cref="SoakSettings.Point"/> the point's mean rate, its latency p99 and every process's resources join a
/// line fitted since the start and one over the sliding window (<see cref="SoakRules"/> decides). The tick thread
/// writes; snapshots read from other threads under a lock.
/// </summary>
internal sealed class SoakJudge(
    SoakSettings settings, double offeredPerSecond, Func<IReadOnlyList<SoakProcessReading>> readProcesses, Action<SoakPoint>? recordPoint = null)
{
    private readonly object _gate = new();
    private readonly LongHistogram _pointLatency = LatencyHistograms.Create();
    private readonly Series _throughput = new(settings.WindowPoints);
    private readonly Series _p99 = new(settings.WindowPoints);
    private readonly Dictionary<(string Role, int Index), Dictionary<ProcessResource, Series>> _processes = [];
    private double _pointStartSeconds = -1;
    private double _rateSum;
    private int _ticks;
    private double _firstWindowRateSum;
    private int _firstWindowPoints;
    private int _points;
    private double _lastSeconds;
    private long? _lastP50;
    private long? _lastP99;
    private long? _lastP999;

    public int Points
    {
        get
        {
            lock (_gate)
            {
                return _points;
            }
        }
    }

    /// <summary>A measured tick, <paramref name="measuredSeconds"/> into the window: its delivered rate and the latency it recorded.</summary>
    public void Tick(double measuredSeconds, double deliveredPerSecond, HistogramBase latency)
    {
        lock (_gate)
        {
            if (_pointStartSeconds < 0)
            {
                _pointStartSeconds = measuredSeconds;
            }

            _rateSum += deliveredPerSecond;
            _ticks++;
            _pointLatency.Add(latency);
            if (measuredSeconds - _pointStartSeconds >= settings.Point.TotalSeconds)
            {
                ClosePoint(measuredSeconds);
            }
        }
    }

    /// <summary>The judgement so far, with the counters since the start.</summary>
    public SoakSummary Judge(long lost, long duplicated, long corrupted)
    {
        lock (_gate)
        {
            var processes = _processes.Select(p => new ProcessTrends(p.Key.Role, p.Key.Index,
                [.. p.Value.Select(r => new ResourceTrend(r.Key, r.Value.Latest, r.Value.Trend()))])).ToList();
            var throughput = _throughput.Trend();
            double? lastWindow = _throughput.WindowMean;
            var (verdict, reasons) = SoakRules.Judge(new SoakEvidence(lost, duplicated, corrupted, _points, throughput, _p99.Trend(),
                offeredPerSecond, lastWindow, processes));
            bool firstWindowDone = _points > settings.WindowPoints;
            return new SoakSummary(verdict, reasons, TimeSpan.FromSeconds(Math.Max(0, _lastSeconds)), settings.Window, throughput,
                firstWindowDone && _firstWindowPoints > 0 ? _firstWindowRateSum / _firstWindowPoints : null,
                firstWindowDone ? lastWindow : null, _p99.Trend(), _lastP50, _lastP99, _lastP999, processes);
        }
    }

    private void ClosePoint(double measuredSeconds)
    {
        // A point is placed at its middle: its mean rate and latency are of the whole span.
        double at = (_pointStartSeconds + measuredSeconds) / 2;
        double rate = _rateSum / _ticks;

        // Above the offered rate is a backlog being sent (a publisher behind its schedule after warm-up sends it first,
        // every message at its intended time): the transport kept up, and settling back is no fall.
        double judged = offeredPerSecond > 0 ? Math.Min(rate, offeredPerSecond) : rate;
        _throughput.Add(at, judged);
        if (_points < settings.WindowPoints)
        {
            _firstWindowRateSum += judged;
            _firstWindowPoints++;
        }

        // The point's own percentiles (none without samples); the latest ones stay for the summary.
        long? p50 = null, p99 = null, p999 = null;
        if (_pointLatency.TotalCount > 0)
        {
            _lastP50 = p50 = LatencyHistograms.Percentile(_pointLatency, 50);
            _lastP99 = p99 = LatencyHistograms.Percentile(_pointLatency, 99);
            _lastP999 = p999 = LatencyHistograms.Percentile(_pointLatency, 99.9);
            _p99.Add(at, p99.Value);
        }

        var values = new List<SoakProcessValue>();
        foreach (var reading in measuredSeconds < settings.ResourceWarmup.TotalSeconds ? [] : readProcesses())
        {
            if (!_processes.TryGetValue((reading.Role, reading.Index), out var resources))
            {
                _processes[(reading.Role, reading.Index)] = resources = [];
            }

            Add(resources, reading, values, ProcessResource.ManagedHeapBytes, at, reading.ManagedHeapBytes);
            Add(resources, reading, values, ProcessResource.RssBytes, at, reading.Resources?.RssBytes);
            Add(resources, reading, values, ProcessResource.SharedMemoryBytes, at, reading.Resources?.SharedMemoryBytes);
            Add(resources, reading, values, ProcessResource.Threads, at, reading.Resources?.Threads);
            Add(resources, reading, values, ProcessResource.Descriptors, at, reading.Resources?.Descriptors);
            Add(resources, reading, values, ProcessResource.GcCommittedBytes, at, reading.GcCommittedBytes);
            Add(resources, reading, values, ProcessResource.NativeBytes, at,
                reading is { Resources: { } r, GcCommittedBytes: { } committed } ? r.RssBytes - r.SharedMemoryBytes - committed : null);
        }

        recordPoint?.Invoke(new SoakPoint(TimeSpan.FromSeconds(at), rate, p50, p99, p999, values));

        _points++;
        _lastSeconds = measuredSeconds;
        _pointStartSeconds = measuredSeconds;
        _rateSum = 0;
        _ticks = 0;
        _pointLatency.Reset();
    }

    private void Add(Dictionary<ProcessResource, Series> resources, SoakProcessReading reading, List<SoakProcessValue> values,
        ProcessResource resource, double at, double? value)
    {
        if (value is not { } v)
        {
            return;
        }

        values.Add(new SoakProcessValue(reading.Role, reading.Index, resource, v));

        if (!resources.TryGetValue(resource, out var series))
        {
            resources[resource] = series = new Series(settings.WindowPoints);
        }

        series.Add(at, v);
    }

    /// <summary>One judged series: the fit since the start and over the window.</summary>
    private sealed class Series(int windowPoints)
    {
        private readonly LineFit _all = new();
        private readonly WindowFit _window = new(windowPoints);

        public double Latest { get; private set; }

        public double? WindowMean => _window.Mean();

        public void Add(double seconds, double value)
        {
            _all.Add(seconds, value);
            _window.Add(seconds, value);
            Latest = value;
        }

        public TrendPair Trend() => new(_all.Slope(), _window.Slope(), _window.Slope(Math.Max(3, _window.Count / 3)));
    }
}
