using IpcBench.Workload.Placement;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// How busy the rest of the machine was around one scenario: readings at the start of the warmup, the start and end of
/// the measured window, and each tick between (a read of /proc/stat and of one stat file per process of ours). The
/// last reading is taken before the agents exit, or their CPU would leave "ours" and count as noise.
/// </summary>
internal sealed class NoiseWatch(Func<IEnumerable<int>> ownPids)
{
    private readonly object _gate = new();
    private NoiseSample? _warmupStart;
    private NoiseSample? _measureStart;
    private NoiseSample? _latest;
    private bool _ended;

    public void WarmupStarted() => Set(ref _warmupStart);

    public void MeasuringStarted() => Set(ref _measureStart);

    /// <summary>A reading between start and end, so a running scenario shows its noise so far.</summary>
    public void Tick()
    {
        lock (_gate)
        {
            if (_ended)
            {
                return;
            }
        }

        Set(ref _latest);
    }

    public void MeasuringEnded()
    {
        Set(ref _latest);
        lock (_gate)
        {
            _ended = true;
        }
    }

    /// <summary>Others' CPU over the measured window so far, in percent of the machine; null before a second reading.</summary>
    public double? NoisePercent
    {
        get
        {
            lock (_gate)
            {
                return _measureStart is { } start && _latest is { } latest && latest.TakenAtNs > start.TakenAtNs
                    ? latest.NoisePercentSince(start)
                    : null;
            }
        }
    }

    /// <summary>The part of <see cref="NoisePercent"/> that was the hypervisor's steal, in percent of the machine.</summary>
    public double? StealPercent
    {
        get
        {
            lock (_gate)
            {
                return _measureStart is { } start && _latest is { } latest && latest.TakenAtNs > start.TakenAtNs
                    ? latest.StealPercentSince(start)
                    : null;
            }
        }
    }

    /// <summary>Others' CPU over the warmup; null without a warmup.</summary>
    public double? WarmupNoisePercent
    {
        get
        {
            lock (_gate)
            {
                return _warmupStart is { } start && _measureStart is { } end && end.TakenAtNs > start.TakenAtNs
                    ? end.NoisePercentSince(start)
                    : null;
            }
        }
    }

    /// <summary>The 1-minute load average of the latest reading; null before any or where the kernel does not say.</summary>
    public double? LoadAverage1m
    {
        get
        {
            lock (_gate)
            {
                return (_latest ?? _measureStart) is { } sample && !double.IsNaN(sample.LoadAverage1m) ? sample.LoadAverage1m : null;
            }
        }
    }

    private void Set(ref NoiseSample? field)
    {
        var sample = NoiseSample.Take(ownPids());
        lock (_gate)
        {
            field = sample;
        }
    }
}
