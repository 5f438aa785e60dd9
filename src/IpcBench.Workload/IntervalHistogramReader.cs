using HdrHistogram;

namespace IpcBench.Workload;

/// <summary>
/// Turns a histogram that one hot-loop thread keeps recording into per-interval deltas, read from another thread.
/// HdrHistogram's Recorder would swap histograms instead, but it pays two interlocked increments per recorded value;
/// here the hot loop only does RecordValue, and the reader pays a copy of the counts once an interval. A copy may
/// straddle a concurrent record; a count missed now is in the next interval, so every value is reported exactly once.
/// </summary>
public sealed class IntervalHistogramReader(LongHistogram source)
{
    // Two histograms reused from interval to interval (each ~270 KB: allocating them every second is what this avoids).
    private LongHistogram _previous = LatencyHistograms.Create();
    private LongHistogram _current = LatencyHistograms.Create();

    /// <summary>Adds what was recorded since the last call to <paramref name="into"/>. Call from one thread.</summary>
    public void ReadInterval(HistogramBase into)
    {
        _current.Reset();
        _current.Add(source);
        foreach (var value in _current.RecordedValues())
        {
            long delta = value.CountAtValueIteratedTo - _previous.GetCountAtValue(value.ValueIteratedTo);
            if (delta > 0)
            {
                into.RecordValueWithCount(value.ValueIteratedTo, delta);
            }
        }

        (_previous, _current) = (_current, _previous);
    }
}
