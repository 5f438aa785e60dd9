using IpcBench.Daemon.Scenarios;
using Prometheus;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// Carries a scenario's own latency histogram (cumulative counts at fixed bounds, kept by the engine) over to a
/// prometheus-net histogram, which only grows through observations. Each scrape observes what the source gained since
/// the previous one, bucket by bucket, at values inside each bucket chosen so the exported sum is the source's sum:
/// counts are exact, and so is the mean latency a dashboard computes from _sum / _count.
/// </summary>
internal sealed class HistogramReplay(double[] upperBounds)
{
    private readonly long[] _previous = new long[upperBounds.Length];
    private readonly long[] _added = new long[upperBounds.Length + 1];
    private long _previousCount;
    private double _previousSum;

    /// <summary>
    /// Observes the difference between <paramref name="now"/> and the previous call into <paramref name="target"/>.
    /// False, with nothing observed, when the source went backwards (it was reset): the caller starts a fresh series and a
    /// fresh replay, as a restarted counter would.
    /// </summary>
    public bool TryAdvance(LatencyBuckets now, IHistogram target)
    {
        ArgumentNullException.ThrowIfNull(now);
        ArgumentNullException.ThrowIfNull(target);
        if (now.Cumulative.Length != upperBounds.Length)
        {
            throw new ArgumentException("one cumulative count per bound", nameof(now));
        }

        long below = 0;
        for (int i = 0; i < upperBounds.Length; i++)
        {
            long gained = now.Cumulative[i] - _previous[i];
            _added[i] = gained - below;
            below = gained;
        }

        _added[^1] = now.Count - _previousCount - below;
        if (now.Count < _previousCount || _added.Any(n => n < 0))
        {
            return false;
        }

        Observe(target, now.SumSeconds - _previousSum);
        now.Cumulative.CopyTo(_previous, 0);
        _previousCount = now.Count;
        _previousSum = now.SumSeconds;
        return true;
    }

    private void Observe(IHistogram target, double addedSum)
    {
        double atUpper = 0;
        double atLower = 0;
        for (int i = 0; i < upperBounds.Length; i++)
        {
            atUpper += upperBounds[i] * _added[i];
            atLower += Lower(i) * _added[i];
        }

        long overflow = _added[^1];
        // Above the last bound only the sum says where the values were: the finite buckets give what they can at most.
        double position = overflow > 0 || atUpper <= atLower ? 1 : Math.Clamp((addedSum - atLower) / (atUpper - atLower), 0, 1);
        for (int i = 0; i < upperBounds.Length; i++)
        {
            if (_added[i] > 0)
            {
                double lower = Lower(i);
                double value = Math.Clamp(lower + position * (upperBounds[i] - lower), Math.BitIncrement(lower), upperBounds[i]);
                target.Observe(value, _added[i]);
            }
        }

        if (overflow > 0)
        {
            double last = upperBounds[^1];
            target.Observe(Math.Max(Math.BitIncrement(last), (addedSum - atUpper) / overflow), overflow);
        }
    }

    private double Lower(int bucket) => bucket == 0 ? 0 : upperBounds[bucket - 1];
}
