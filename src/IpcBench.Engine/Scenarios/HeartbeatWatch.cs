namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// How long an agent has been silent while the daemon was listening. A check that comes later than half the timeout
/// means the daemon itself did not run — a starved thread pool, a paused VM — while the agents' reports may wait unread
/// in its sockets: the time it was away (the gap less one period) is not counted against them, so a stall of the daemon
/// never fails agents that kept reporting, while a hung agent is still found however often the daemon stalls. In a
/// four-scenario soak (2026-11-27) Kestrel's heartbeat stalled 9.4 s and three scenarios failed at once, each blaming
/// an agent for 10.4–11.8 s of silence.
/// </summary>
internal sealed class HeartbeatWatch(long timeoutNs, long periodNs, long startNs)
{
    private const int MaxStalls = 256;
    private readonly List<(long AtNs, long AwayNs)> _stalls = [];
    private long _lastCheckNs = startNs;

    /// <summary>A check later than this after the previous one means the daemon was away.</summary>
    public long StallNs { get; } = Math.Max(timeoutNs / 2, 2 * periodNs);

    /// <summary>Called once per check, before <see cref="SilenceNs"/>.</summary>
    public void Check(long nowNs)
    {
        long gap = nowNs - _lastCheckNs;
        if (gap > StallNs)
        {
            _stalls.Add((nowNs, gap - periodNs));
        }

        _lastCheckNs = nowNs;
        // Bounded for a soak of days: dropping the oldest stalls only counts more silence, never less.
        if (_stalls.Count > MaxStalls)
        {
            _stalls.RemoveAt(0);
        }
    }

    /// <summary>Silence since <paramref name="heardNs"/> that the daemon was there to hear.</summary>
    public long SilenceNs(long nowNs, long heardNs)
    {
        long silence = nowNs - heardNs;
        foreach (var (at, away) in _stalls)
        {
            if (at > heardNs)
            {
                silence -= Math.Min(away, at - heardNs);
            }
        }

        return Math.Max(0, silence);
    }

    public bool IsHung(long nowNs, long heardNs) => SilenceNs(nowNs, heardNs) > timeoutNs;
}
