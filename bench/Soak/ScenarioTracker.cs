using System.Globalization;
using IpcBench.V1;

namespace IpcBench.Soak;

/// <summary>The daemon and the machine at one moment.</summary>
public sealed record MachineSample(long DaemonResidentBytes, int DaemonDescriptors, long SharedMemoryUsedBytes)
{
    public static MachineSample Take(int daemonPid) =>
        new(Probes.ResidentBytes(daemonPid), Probes.OpenDescriptors(daemonPid), Probes.SharedMemoryUsedBytes());
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
    long SharedMemoryUsedBytes);

/// <summary>Follows one scenario: keeps a sample a second while it runs and turns them into its result.</summary>
public sealed class ScenarioTracker(Scenario started, TimeSpan duration, TimeSpan warmup, MachineSample before)
{
    private readonly List<SoakSample> _samples = [];
    private Scenario _latest = started;
    private bool _hasAgents;

    public string Id { get; } = started.Id;

    public bool Finished => _latest.State is ScenarioState.Completed or ScenarioState.Stopped or ScenarioState.Failed;

    public void Observe(Scenario scenario, MachineSample machine, string metrics)
    {
        _latest = scenario;
        if (scenario.State != ScenarioState.Running || scenario.LastInterval?.Elapsed is not { } elapsed)
        {
            return;
        }

        double measured = (elapsed.ToTimeSpan() - warmup).TotalSeconds;
        if (measured <= 0)
        {
            return;
        }

        // Agents from the scenario's own process list (they report their pids), read straight from /proc.
        var agentPids = scenario.Stats?.Processes.Where(p => p.Role == "agent" && p.Pid > 0).Select(p => p.Pid).ToList() ?? [];
        _hasAgents |= agentPids.Count > 0;
        string scenarioLabel = $"scenario=\"{Id}\"";
        _samples.Add(new SoakSample(
            measured,
            scenario.LastInterval.MessagesPerSecond,
            machine.DaemonResidentBytes,
            (long)Probes.Sum(metrics, "dotnet_total_memory_bytes"),
            machine.DaemonDescriptors,
            agentPids.Sum(Probes.ResidentBytes),
            (long)Probes.Sum(metrics, "ipcbench_agent_gc_heap_bytes", scenarioLabel),
            (long)Probes.Sum(metrics, "ipcbench_agent_gc_allocated_bytes_total", scenarioLabel),
            agentPids.Sum(Probes.OpenDescriptors),
            machine.SharedMemoryUsedBytes));
    }

    public string Describe() => string.Create(CultureInfo.InvariantCulture,
        $"{_latest.Spec.Transport} {_latest.State} {(_samples.Count > 0 ? SoakSession.Rate(_samples[^1].MessagesPerSecond) : "-")}");

    public TransportResult Result(MachineSample after)
    {
        double tenth = duration.TotalSeconds / 10;
        var first = Tenth(s => s.Elapsed <= tenth, _samples.Take(1));
        var last = Tenth(s => s.Elapsed >= duration.TotalSeconds - tenth, _samples.TakeLast(1));
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
            first.Count > 0 ? first.Max(s => s.AgentDescriptors) : 0,
            last.Count > 0 ? last.Max(s => s.AgentDescriptors) : 0,
            before.DaemonDescriptors,
            after.DaemonDescriptors,
            before.SharedMemoryUsedBytes,
            _samples.Count > 0 ? _samples.Max(s => s.SharedMemoryUsedBytes) : 0,
            after.SharedMemoryUsedBytes);
    }

    /// <summary>What the agents allocate per second in steady state (all of them together), from their GC counters.</summary>
    private double AllocationRate()
    {
        var counted = _samples.Where(s => s.AgentsAllocatedBytes > 0).ToList();
        return counted.Count >= 2 && counted[^1].Elapsed > counted[0].Elapsed
            ? (counted[^1].AgentsAllocatedBytes - counted[0].AgentsAllocatedBytes) / (counted[^1].Elapsed - counted[0].Elapsed)
            : 0;
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
    long SharedMemoryUsedAfter)
{
    public static double Growth(long first, long last) => first > 0 ? (double)last / first - 1 : 0;
}
