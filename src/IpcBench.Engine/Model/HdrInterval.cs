namespace IpcBench.Daemon.Model;

/// <summary>
/// One interval's latency histogram in HdrHistogram's compressed encoding, with its wall-clock bounds (ms since the
/// epoch); <paramref name="Index"/> orders them (a run's last interval can start in the same millisecond as it ends).
/// </summary>
public sealed record HdrInterval(int Index, long StartMs, long EndMs, byte[] Histogram);
