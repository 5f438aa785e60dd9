using System.Globalization;
using IpcBench.V1;

namespace IpcBench.Soak;

/// <summary>The daemon and the machine at one moment.</summary>
public sealed record MachineSample(long DaemonResidentBytes, int DaemonDescriptors, long SharedMemoryUsedBytes)
{
    /// <summary>What the counted descriptors point at, for naming the new ones when the count grew.</summary>
    public IReadOnlyList<string> DaemonDescriptorTargets { get; init; } = [];

    public static MachineSample Take(int daemonPid)
    {
        var targets = Probes.OpenDescriptorTargets(daemonPid);
        return new(Probes.ResidentBytes(daemonPid), targets.Count, Probes.SharedMemoryUsedBytes()) { DaemonDescriptorTargets = targets };
    }
}

/// <summary>One second of a soaked scenario, <see cref="Elapsed"/> seconds into its measured window.</summary>
public sealed record SoakSample(
    double Elapsed,
    double MessagesPerSecond,
    long DaemonResidentBytes,
    long DaemonHeapBytes,
    int DaemonDescriptors,
    long AgentsResidentBytes,
    long AgentsHeapBytes,
    long AgentsAllocatedBytes,
    int AgentDescriptors,
    bool? AfterHeapRead,
    long SharedMemoryUsedBytes);

/// <summary>Follows one scenario: keeps a sample a second while it runs and turns them into its result.</summary>
public sealed class ScenarioTracker
{
    private readonly List<SoakSample> _samples = [];
    private readonly bool _crossProcess;
    private readonly int _subscribers;
    private readonly TimeSpan _duration;
    private readonly TimeSpan _warmup;
    private readonly MachineSample _before;
    private volatile Scenario _latest;
    private volatile IReadOnlyList<int> _agentPids = [];
    private volatile bool _measuring;
    private volatile bool _heapRead;
    private int _readings;
    private IReadOnlyList<int> _readAgents = [];
    private bool _hasAgents;

    public ScenarioTracker(Scenario started, bool crossProcess, TimeSpan duration, TimeSpan warmup, MachineSample before)
    {
        _latest = started;
        _crossProcess = crossProcess;
        _subscribers = started.Spec.Subscribers;
        _duration = duration;
        _warmup = warmup;
        _before = before;
        Id = started.Id;
    }

    public string Id { get; }

    public bool Finished => _latest.State is ScenarioState.Completed or ScenarioState.Stopped or ScenarioState.Failed;

    /// <summary>Warming up or later: its agents have started and attached.</summary>
    public bool Started => _latest.State is not (ScenarioState.Unspecified or ScenarioState.Pending or ScenarioState.Starting);

    /// <summary>In its measured window, with every agent known (a cross-process transport has one per subscriber): ready for the first heap reading.</summary>
    public bool ReadyToRead => _measuring && (!_crossProcess || _agentPids.Count == _subscribers);

    /// <summary>The agents whose live heaps are read, the same processes both times (one replaced by another is not growth).</summary>
    public IReadOnlyList<int> ReadAgents() => _readAgents = _agentPids;

    /// <summary>
    /// The first counted heap reading is in (after the uncounted one that pays the first EventPipe session's descriptors,
    /// seen +1 to +2 per agent): the agents' descriptors are compared from samples taken after it, so the probe is not
    /// read as the agents' own growth.
    /// </summary>
    public void FirstHeapReadDone() => _heapRead = true;

    /// <summary>
    /// A reading's sessions open or close (odd while open): each holds a diagnostics connection, one descriptor, in every
    /// process read (seen: a grpc-uds agent sampled at 101 for 100). Samples that may have seen one are not compared.
    /// </summary>
    public void HeapReading() => Interlocked.Increment(ref _readings);

    public void Observe(Scenario scenario, MachineSample machine, string metrics)
    {
        _latest = scenario;
        if (scenario.State != ScenarioState.Running || scenario.LastInterval?.Elapsed is not { } elapsed)
        {
            return;
        }

        double measured = (elapsed.ToTimeSpan() - _warmup).TotalSeconds;
        if (measured <= 0)
        {
            return;
        }

        // Agents from the scenario's own process list (they report their pids), read straight from /proc.
        var agentPids = scenario.Stats?.Processes.Where(p => p.Role == "agent" && p.Pid > 0).Select(p => p.Pid).ToList() ?? [];
        _hasAgents |= agentPids.Count > 0;
        _agentPids = agentPids;
        _measuring = true;
        string scenarioLabel = $"scenario=\"{Id}\"";
        int readings = Volatile.Read(ref _readings);
        int agentDescriptors = agentPids.Sum(Probes.OpenDescriptors);
        bool clean = readings % 2 == 0 && Volatile.Read(ref _readings) == readings;
        _samples.Add(new SoakSample(
            measured,
            scenario.LastInterval.MessagesPerSecond,
            machine.DaemonResidentBytes,
            (long)Probes.Sum(metrics, "dotnet_total_memory_bytes"),
            machine.DaemonDescriptors,
            agentPids.Sum(Probes.ResidentBytes),
            (long)Probes.Sum(metrics, "ipcbench_agent_gc_heap_bytes", scenarioLabel),
            (long)Probes.Sum(metrics, "ipcbench_agent_gc_allocated_bytes_total", scenarioLabel),
            agentDescriptors,
            clean ? _heapRead : null,
            machine.SharedMemoryUsedBytes));
    }

    public string Describe() => string.Create(CultureInfo.InvariantCulture,
        $"{_latest.Spec.Transport} {_latest.State} {(_samples.Count > 0 ? SoakSession.Rate(_samples[^1].MessagesPerSecond) : "-")}");

    public TransportResult Result(MachineSample after, HeapReadings heaps, int daemonPid)
    {
        var (daemonFirst, daemonLast) = heaps.Of([daemonPid]);
        var (agentsFirst, agentsLast) = heaps.Of(_readAgents);
        double tenth = _duration.TotalSeconds / 10;
        var first = Tenth(s => s.Elapsed <= tenth, _samples.Take(1));
        var last = Tenth(s => s.Elapsed >= _duration.TotalSeconds - tenth, _samples.TakeLast(1));
        var stats = _latest.Stats ?? new ScenarioStats();
        return new TransportResult(
            _latest.Spec.Transport,
            Id,
            _latest.State.ToString(),
            _latest.Error,
            _latest.Spec.WaitStrategy.ToString(),
            _hasAgents,
            _samples.Count,
            stats.MessagesPerSecond,
            Mean(first, s => s.MessagesPerSecond),
            Mean(last, s => s.MessagesPerSecond),
            stats.MessagesReceived,
            stats.MessagesLost,
            stats.MessagesCorrupted,
            stats.MessagesDuplicated,
            (long)Mean(first, s => s.DaemonResidentBytes),
            (long)Mean(last, s => s.DaemonResidentBytes),
            (long)Mean(first, s => s.DaemonHeapBytes),
            (long)Mean(last, s => s.DaemonHeapBytes),
            (long)Mean(first, s => s.AgentsResidentBytes),
            (long)Mean(last, s => s.AgentsResidentBytes),
            (long)Mean(first, s => s.AgentsHeapBytes),
            (long)Mean(last, s => s.AgentsHeapBytes),
            AllocationRate(),
            AgentDescriptors(fromEnd: false),
            AgentDescriptors(fromEnd: true),
            _before.DaemonDescriptors,
            after.DaemonDescriptors,
            _before.SharedMemoryUsedBytes,
            _samples.Count > 0 ? _samples.Max(s => s.SharedMemoryUsedBytes) : 0,
            after.SharedMemoryUsedBytes,
            heaps.Seconds,
            daemonFirst,
            daemonLast,
            agentsFirst,
            agentsLast);
    }

    /// <summary>What the agents allocate per second in steady state (all of them together), from their GC counters.</summary>
    private double AllocationRate()
    {
        var counted = _samples.Where(s => s.AgentsAllocatedBytes > 0).ToList();
        return counted.Count >= 2 && counted[^1].Elapsed > counted[0].Elapsed
            ? (counted[^1].AgentsAllocatedBytes - counted[0].AgentsAllocatedBytes) / (counted[^1].Elapsed - counted[0].Elapsed)
            : 0;
    }

    /// <summary>
    /// The agents' descriptors at one end of the window: the fewest over its first or last few clean samples. A
    /// descriptor a leak leaves stays open in every later sample and raises that minimum; one open for a moment is in a
    /// sample only by chance (an agent reads /proc/self/statm and walks /proc/self/fd for its own process sample each
    /// second: with the largest sample of the last tenth compared, a shm-ring agent read 103 for 102 in 1 CI run of 5).
    /// </summary>
    private int AgentDescriptors(bool fromEnd)
    {
        const int Samples = 5;
        var clean = _samples.Where(s => s.AfterHeapRead == true).Select(s => s.AgentDescriptors).ToList();
        return clean.Count == 0 ? 0 : (fromEnd ? clean.TakeLast(Samples) : clean.Take(Samples)).Min();
    }

    /// <summary>The samples of a tenth of the window, or the nearest one when a short soak has none inside it.</summary>
    private List<SoakSample> Tenth(Func<SoakSample, bool> inside, IEnumerable<SoakSample> nearest)
    {
        var samples = _samples.Where(inside).ToList();
        return samples.Count > 0 ? samples : [.. nearest];
    }

    private static double Mean(List<SoakSample> samples, Func<SoakSample, double> value) => samples.Count > 0 ? samples.Average(value) : 0;
}

/// <summary>One transport's soak: rates of the first and last tenth, memory then and at the end, what leaked.</summary>
public sealed record TransportResult(
    string Transport,
    string ScenarioId,
    string State,
    string Error,
    string WaitStrategy,
    bool HasAgents,
    int Samples,
    double MessagesPerSecond,
    double FirstTenthMessagesPerSecond,
    double LastTenthMessagesPerSecond,
    ulong Received,
    ulong Lost,
    ulong Corrupted,
    ulong Duplicated,
    long DaemonResidentBytesFirst,
    long DaemonResidentBytesLast,
    long DaemonHeapBytesFirst,
    long DaemonHeapBytesLast,
    long AgentsResidentBytesFirst,
    long AgentsResidentBytesLast,
    long AgentsHeapBytesFirst,
    long AgentsHeapBytesLast,
    double AgentsAllocatedBytesPerSecond,
    int AgentDescriptorsFirst,
    int AgentDescriptorsLast,
    int DaemonDescriptorsBefore,
    int DaemonDescriptorsAfter,
    long SharedMemoryUsedBefore,
    long SharedMemoryUsedPeak,
    long SharedMemoryUsedAfter,
    double LiveHeapSeconds,
    LiveHeap? DaemonLiveFirst,
    LiveHeap? DaemonLiveLast,
    LiveHeap? AgentsLiveFirst,
    LiveHeap? AgentsLiveLast)
{
    public static double Growth(long first, long last) => first > 0 ? (double)last / first - 1 : 0;
}
