using System.Numerics;
using System.Runtime.CompilerServices;

namespace IpcBench.Workload;

/// <summary>
/// An HdrHistogram-style log-linear histogram of nanoseconds (1 ns to 1 hour, 3 significant digits), written by one
/// thread without allocation or locks. The HdrHistogram package is not available to this build, so this keeps the
/// same bucket layout and the same percentile convention (the highest value equivalent to the percentile's bucket).
/// </summary>
public sealed class LatencyHistogram
{
    public const long HighestTrackableNs = 3_600_000_000_000;
    private const int SubBucketBits = 11;
    private const int SubBucketHalfBits = SubBucketBits - 1;
    private const int SubBucketHalfCount = 1 << SubBucketHalfBits;
    private const long SubBucketMask = (1L << SubBucketBits) - 1;
    private const int BucketCount = 32;

    public const int CountsLength = (BucketCount + 1) * SubBucketHalfCount;

    private readonly long[] _counts = new long[CountsLength];
    private long _totalCount;
    private long _min = long.MaxValue;
    private long _max;
    private double _sum;

    public long TotalCount => _totalCount;

    public long Min => _totalCount == 0 ? 0 : _min;

    public long Max => _max;

    public double Mean => _totalCount == 0 ? 0 : _sum / _totalCount;

    /// <summary>Sum of the recorded values (nanoseconds; bucket values for counts added from other histograms).</summary>
    public double Sum => _sum;

    // Inlined into the receive loops: a call per message costs more than the arithmetic.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Record(long valueNs) => RecordCount(valueNs, 1);

    /// <summary>Empties the histogram so interval readers can reuse one instead of allocating ~270 KB each time.</summary>
    public void Reset()
    {
        Array.Clear(_counts);
        _totalCount = 0;
        _min = long.MaxValue;
        _max = 0;
        _sum = 0;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void RecordCount(long valueNs, long count)
    {
        valueNs = Math.Clamp(valueNs, 0, HighestTrackableNs);
        _counts[IndexOf(valueNs)] += count;
        _totalCount += count;
        _sum += (double)valueNs * count;
        if (valueNs > _max)
        {
            _max = valueNs;
        }

        if (valueNs < _min)
        {
            _min = valueNs;
        }
    }

    public void Add(LatencyHistogram other)
    {
        for (int i = 0; i < CountsLength; i++)
        {
            long count = other._counts[i];
            if (count != 0)
            {
                RecordCount(ValueAt(i), count);
            }
        }

        // Bucket values lose the exact extremes; keep the real ones.
        if (other._totalCount > 0)
        {
            _max = Math.Max(_max, other._max);
            _min = Math.Min(_min, other._min);
        }
    }

    /// <summary>The value at or below which <paramref name="percentile"/> % of the recorded values fall.</summary>
    public long ValueAtPercentile(double percentile)
    {
        if (_totalCount == 0)
        {
            return 0;
        }

        long target = Math.Max(1, (long)Math.Ceiling(percentile / 100.0 * _totalCount));
        long seen = 0;
        for (int i = 0; i < CountsLength; i++)
        {
            seen += _counts[i];
            if (seen >= target)
            {
                return Math.Min(HighestEquivalentValue(i), _max);
            }
        }

        return _max;
    }

    /// <summary>
    /// Copies the counts for a reader on another thread. The copy may straddle a concurrent record; a count missed now
    /// shows in the next interval, which is what interval reporting needs.
    /// </summary>
    public void CopyCountsTo(long[] destination) => _counts.AsSpan().CopyTo(destination);

    public ReadOnlySpan<long> Counts => _counts;

    /// <summary>
    /// Cumulative counts at fixed upper bounds, for exporting as a Prometheus-style histogram: for each bound (ascending,
    /// nanoseconds) how many recorded values are at or below it, a value counting at the lowest value of its bucket
    /// (so within the histogram's 3 significant digits). Values above the last bound count in none of them.
    /// </summary>
    public void CumulativeCountsAt(ReadOnlySpan<long> upperBoundsNs, Span<long> cumulative)
    {
        if (cumulative.Length < upperBoundsNs.Length)
        {
            throw new ArgumentException("needs one count per bound", nameof(cumulative));
        }

        long running = 0;
        int bound = 0;
        for (int i = 0; i < CountsLength && bound < upperBoundsNs.Length; i++)
        {
            long count = _counts[i];
            if (count == 0)
            {
                continue;
            }

            long value = ValueAt(i);
            while (bound < upperBoundsNs.Length && value > upperBoundsNs[bound])
            {
                cumulative[bound++] = running;
            }

            running += count;
        }

        while (bound < upperBoundsNs.Length)
        {
            cumulative[bound++] = running;
        }
    }

    /// <summary>Calls <paramref name="visit"/> with (bucket value, count) for every non-empty bucket.</summary>
    public static void ForEachBucket(ReadOnlySpan<long> counts, Action<long, long> visit) =>
        ForEachBucket(counts, visit, static (value, count, visit) => visit(value, count));

    /// <summary>Visits every non-empty bucket; <paramref name="state"/> lets callers pass a static lambda (no closure per call).</summary>
    public static void ForEachBucket<TState>(ReadOnlySpan<long> counts, TState state, Action<long, long, TState> visit)
    {
        for (int i = 0; i < counts.Length; i++)
        {
            if (counts[i] != 0)
            {
                visit(ValueAt(i), counts[i], state);
            }
        }
    }

    public static int IndexOf(long value)
    {
        int bucket = 64 - BitOperations.LeadingZeroCount((ulong)(value | SubBucketMask)) - SubBucketBits;
        int subBucket = (int)(value >> bucket);
        return ((bucket + 1) << SubBucketHalfBits) + (subBucket - SubBucketHalfCount);
    }

    public static long ValueAt(int index)
    {
        int bucket = (index >> SubBucketHalfBits) - 1;
        int subBucket = (index & (SubBucketHalfCount - 1)) + SubBucketHalfCount;
        if (bucket < 0)
        {
            subBucket -= SubBucketHalfCount;
            bucket = 0;
        }

        return (long)subBucket << bucket;
    }

    private static long HighestEquivalentValue(int index)
    {
        int bucket = Math.Max(0, (index >> SubBucketHalfBits) - 1);
        return ValueAt(index) + (1L << bucket) - 1;
    }
}

/// <summary>Turns a histogram that keeps growing into per-interval deltas, read from another thread.</summary>
public sealed class HistogramIntervalReader(LatencyHistogram source)
{
    private readonly long[] _previous = new long[LatencyHistogram.CountsLength];
    private readonly long[] _current = new long[LatencyHistogram.CountsLength];

    /// <summary>Adds what was recorded since the last call to <paramref name="into"/>.</summary>
    public void ReadInterval(LatencyHistogram into)
    {
        source.CopyCountsTo(_current);
        for (int i = 0; i < _current.Length; i++)
        {
            long delta = _current[i] - _previous[i];
            if (delta > 0)
            {
                into.RecordCount(LatencyHistogram.ValueAt(i), delta);
                _previous[i] = _current[i];
            }
        }
    }
}
