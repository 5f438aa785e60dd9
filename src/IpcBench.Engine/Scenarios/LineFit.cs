using IpcBench.Daemon.Model;
using Perfolizer.Mathematics.Distributions.ContinuousDistributions;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// A least-squares line through (seconds, value) points, kept in six sums: constant memory however long a soak runs.
/// The slope's 95 % interval assumes independent residuals; soak points are means over several seconds, which removes
/// most of the second-to-second correlation, not all of it (docs/control-plane.md, "Soak").
/// </summary>
internal sealed class LineFit
{
    private int _n;
    private double _firstSeconds;
    private double _lastSeconds;
    private double _sumT;
    private double _sumY;
    private double _sumTT;
    private double _sumTY;
    private double _sumYY;

    public int Count => _n;

    public void Add(double seconds, double value)
    {
        if (_n == 0)
        {
            _firstSeconds = seconds;
        }

        // Relative to the first point: keeps the sums small, so the differences below lose no precision.
        double t = seconds - _firstSeconds;
        _lastSeconds = seconds;
        _n++;
        _sumT += t;
        _sumY += value;
        _sumTT += t * t;
        _sumTY += t * value;
        _sumYY += value * value;
    }

    /// <summary>The slope per hour and its 95 % interval; null below three points or with no spread in time.</summary>
    public TrendSlope? Slope()
    {
        double sxx = _sumTT - _sumT * _sumT / _n;
        if (_n < 3 || sxx <= 0)
        {
            return null;
        }

        double sxy = _sumTY - _sumT * _sumY / _n;
        double syy = _sumYY - _sumY * _sumY / _n;
        double slope = sxy / sxx;
        double residual = Math.Max(0, syy - slope * sxy) / (_n - 2);
        double halfWidth = StudentT975(_n - 2) * Math.Sqrt(residual / sxx);
        const double hour = 3600;
        return new TrendSlope(slope * hour, (slope - halfWidth) * hour, (slope + halfWidth) * hour, _n,
            TimeSpan.FromSeconds(_lastSeconds - _firstSeconds), _sumY / _n);
    }

    /// <summary>The 97.5 % quantile of Student's t with <paramref name="df"/> degrees of freedom (Perfolizer's distribution).</summary>
    public static double StudentT975(int df) => new StudentDistribution(df).Quantile(0.975);
}

/// <summary>The same over the last <c>capacity</c> points only: a ring of them, refitted when asked (a few hundred at most).</summary>
internal sealed class WindowFit(int capacity)
{
    private readonly double[] _seconds = new double[capacity];
    private readonly double[] _values = new double[capacity];
    private int _next;
    private int _count;

    public int Count => _count;

    public void Add(double seconds, double value)
    {
        _seconds[_next] = seconds;
        _values[_next] = value;
        _next = (_next + 1) % capacity;
        _count = Math.Min(_count + 1, capacity);
    }

    /// <summary>The mean of the points in the window; null when empty.</summary>
    public double? Mean()
    {
        if (_count == 0)
        {
            return null;
        }

        double sum = 0;
        for (int i = 0; i < _count; i++)
        {
            sum += _values[i];
        }

        return sum / _count;
    }

    /// <summary>The fit over the window's points, or over only its latest <paramref name="latest"/> of them.</summary>
    public TrendSlope? Slope(int latest = int.MaxValue)
    {
        var fit = new LineFit();
        int count = Math.Min(latest, _count);
        int oldest = ((_count < capacity ? 0 : _next) + _count - count) % capacity;
        for (int i = 0; i < count; i++)
        {
            int at = (oldest + i) % capacity;
            fit.Add(_seconds[at], _values[at]);
        }

        return fit.Slope();
    }
}
