namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The measured window's msg/s second by second, for the placement rule's step (<see cref="Model.SeriesStep"/>), in
/// bounded memory: a soak runs for days and the series is read on every tick. Up to <see cref="MaxPoints"/> seconds are
/// kept as they are; past that, neighbouring points are merged into their means and each point stands for twice as many
/// seconds, so a step in a long run is found at the resolution of its points (an hour of seconds, then 2 s, 4 s, …).
/// </summary>
internal sealed class RateSeries
{
    /// <summary>An hour of whole seconds: every timed run and the first hour of a soak keep one point per second.</summary>
    public const int MaxPoints = 3600;

    private readonly List<double> _points = [];
    private double _pendingSum;
    private int _pendingSeconds;

    /// <summary>How many seconds each point stands for (a power of two).</summary>
    public int SecondsPerPoint { get; private set; } = 1;

    /// <summary>How many points there are.</summary>
    public int Count => _points.Count;

    public void Add(double ratePerSecond)
    {
        _pendingSum += ratePerSecond;
        if (++_pendingSeconds < SecondsPerPoint)
        {
            return;
        }

        _points.Add(_pendingSum / SecondsPerPoint);
        _pendingSum = 0;
        _pendingSeconds = 0;
        if (_points.Count == MaxPoints)
        {
            for (int i = 0; i < MaxPoints / 2; i++)
            {
                _points[i] = (_points[2 * i] + _points[2 * i + 1]) / 2;
            }

            _points.RemoveRange(MaxPoints / 2, MaxPoints / 2);
            SecondsPerPoint *= 2;
        }
    }

    /// <summary>The whole points so far (seconds not yet making up a point are left out).</summary>
    public double[] ToArray() => [.. _points];
}
