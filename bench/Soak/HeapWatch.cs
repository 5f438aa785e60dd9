using System.Diagnostics;

namespace IpcBench.Soak;

/// <summary>
/// When the soak reads live heaps (<see cref="LiveHeapProbe"/>): each scenario's agents as it starts measuring and
/// again <see cref="LastProbeLead"/> before its window ends (they exit with it); the daemon once every scenario
/// measures and again when the first of them reaches its last probe. Each probe is a forced full collection, so a
/// process is probed twice, not every second.
/// </summary>
public sealed class HeapWatch(int daemonPid, TimeSpan duration, IReadOnlyList<ScenarioTracker> trackers)
{
    /// <summary>Generous: a loaded machine answers the diagnostics IPC slowly, and a probe that times out fails the check.</summary>
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(30);

    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private double _daemonFirstAt;

    /// <summary>Time enough before a window's end for a probe of all its agents, however loaded the machine.</summary>
    public TimeSpan LastProbeLead => TimeSpan.FromSeconds(Math.Max(4, duration.TotalSeconds / 4));

    public LiveHeap? DaemonFirst { get; private set; }

    public LiveHeap? DaemonLast { get; private set; }

    public double DaemonSeconds { get; private set; }

    public bool DaemonProbed { get; private set; }

    public async Task ObserveAsync()
    {
        double lastAt = (duration - LastProbeLead).TotalSeconds;
        var probes = new List<Task>();
        foreach (var tracker in trackers)
        {
            if (tracker.Measured >= 0 && !tracker.AgentsProbedFirst)
            {
                probes.Add(tracker.ProbeAgentsAsync(first: true, ProbeTimeout));
            }
            else if (tracker.Measured >= lastAt && tracker.AgentsProbedFirst && !tracker.AgentsProbedLast)
            {
                probes.Add(tracker.ProbeAgentsAsync(first: false, ProbeTimeout));
            }
        }

        if (!DaemonProbed && trackers.All(t => t.Measured >= 0))
        {
            DaemonProbed = true;
            _daemonFirstAt = _clock.Elapsed.TotalSeconds;
            DaemonFirst = await LiveHeapProbe.MeasureAsync(daemonPid, ProbeTimeout);
        }
        else if (DaemonProbed && DaemonLast is null && trackers.Any(t => t.Measured >= lastAt))
        {
            DaemonLast = await LiveHeapProbe.MeasureAsync(daemonPid, ProbeTimeout);
            DaemonSeconds = _clock.Elapsed.TotalSeconds - _daemonFirstAt;
        }

        await Task.WhenAll(probes);
    }
}
