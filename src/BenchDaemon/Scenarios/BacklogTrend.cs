namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The backlog (deliveries sent but not yet received) once a measured tick, as a least-squares line kept in five sums:
/// constant memory however long a soak runs. Its growth over the window is what <see cref="Model.ValidityRules"/>
/// judges; one tick's stale agent report moves a least-squares line little, which a line through two points would not.
/// </summary>
internal sealed class BacklogTrend
{
    /// <summary>Fewer ticks than this fit no line worth judging.</summary>
    public const int MinimumTicks = 5;

    private readonly object _gate = new();
    private int _n;
    private double _firstSeconds;
    private double _lastSeconds;
    private double _sumT;
    private double _sumY;
    private double _sumTT;
    private double _sumTY;

    public void Add(double seconds, double backlog)
    {
        lock (_gate)
        {
            if (_n == 0)
            {
                _firstSeconds = seconds;
            }

            // Relative to the first tick: keeps the sums' magnitudes small, so the differences below lose no precision.
            double t = seconds - _firstSeconds;
            _lastSeconds = seconds;
            _n++;
            _sumT += t;
            _sumY += backlog;
            _sumTT += t * t;
            _sumTY += t * backlog;
        }
    }

    /// <summary>The fitted line's rise from the first tick to the last, in deliveries; null below <see cref="MinimumTicks"/>.</summary>
    public double? Growth
    {
        get
        {
            lock (_gate)
            {
                double denominator = _n * _sumTT - _sumT * _sumT;
                if (_n < MinimumTicks || denominator <= 0)
                {
                    return null;
                }

                double slope = (_n * _sumTY - _sumT * _sumY) / denominator;
                return slope * (_lastSeconds - _firstSeconds);
            }
        }
    }
}
