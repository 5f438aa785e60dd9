using System.Globalization;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Model;
using IpcBench.V1;
using Prometheus;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// One scenario's series in the registry, set from its metrics snapshot at scrape time and removed together when the
/// scenario is no longer exported. A finished scenario is set once more, from its final snapshot, and then left alone.
/// </summary>
internal sealed class ScenarioSeries
{
    private static readonly RunState[] States =
    [
        RunState.Pending, RunState.Starting, RunState.WarmingUp, RunState.Running,
        RunState.Stopping, RunState.Completed, RunState.Stopped, RunState.Failed,
    ];

    private readonly ScenarioFamilies _families;
    private readonly string _id;
    private readonly string _transport;
    private readonly string _latencyKind;
    private readonly HashSet<ChildBase> _children = [];
    private readonly HashSet<int> _agentsSeen = [];
    private Histogram.Child _latency;
    private HistogramReplay _latencyReplay = new(ScenarioFamilies.LatencyBoundsSeconds);
    private Histogram.Child? _senderLag;
    private HistogramReplay _senderLagReplay = new(ScenarioFamilies.LatencyBoundsSeconds);
    private bool _started;
    private bool _ended;

    public ScenarioSeries(ScenarioFamilies families, ScenarioMetricsSnapshot first)
    {
        ArgumentNullException.ThrowIfNull(families);
        ArgumentNullException.ThrowIfNull(first);
        _families = families;
        _id = first.Id;
        _transport = first.Spec.Transport.Id;
        var spec = first.Spec;
        _latencyKind = spec.RoundTrip ? "round_trip" : "one_way";
        Add(families.Info.WithLabels(_id, _transport, spec.Name, Invariant(spec.Publishers), Invariant(spec.Subscribers), Invariant(spec.PayloadBytes),
            Snake(spec.Topology.ToString()), Snake(spec.PayloadAccess.ToString()), Snake(spec.Mode.ToString()), Snake(spec.WaitMode.ToString()),
            spec.RatePerPublisher.ToString("R", CultureInfo.InvariantCulture))).Set(1);
        _latency = families.Latency.WithLabels(_id, _transport, _latencyKind);
        if (spec.RatePerPublisher > 0)
        {
            // In deliveries, as the received counters count: what the dashboard sets the delivered rate against.
            Add(families.OfferedMessagesPerSecond.WithLabels(_id, _transport)).Set(spec.OfferedMessagesPerSecond);
        }
    }

    /// <summary>Set from the scenario's final snapshot: later scrapes leave its series as they are.</summary>
    public bool IsFinal { get; private set; }

    public void Update(ScenarioMetricsSnapshot s, bool final)
    {
        ArgumentNullException.ThrowIfNull(s);
        foreach (var state in States)
        {
            Add(_families.State.WithLabels(_id, _transport, StateName(state))).Set(state == s.State ? 1 : 0);
        }

        if (s.StartedAt is { } started)
        {
            Set(_families.StartTime, ref _started, (started - DateTime.UnixEpoch).TotalSeconds);
        }

        if (s.EndedAt is { } ended)
        {
            Set(_families.EndTime, ref _ended, (ended - DateTime.UnixEpoch).TotalSeconds);
        }

        Add(_families.MeasuredSeconds.WithLabels(_id, _transport)).Set(s.MeasuredSeconds);
        Add(_families.MessagesPerSecond.WithLabels(_id, _transport)).Set(s.MeasuredSeconds > 0 ? s.MeasuredMessages / s.MeasuredSeconds : 0);
        Add(_families.BytesPerSecond.WithLabels(_id, _transport)).Set(s.MeasuredSeconds > 0 ? s.MeasuredBytes / s.MeasuredSeconds : 0);

        foreach (var p in s.Publishers)
        {
            var index = Invariant(p.Index);
            Add(_families.Sent.WithLabels(_id, _transport, "publisher", index)).IncTo(p.Sent);
            Add(_families.PublisherCorrupted.WithLabels(_id, _transport, "publisher", index)).IncTo(p.BadEchoes);
        }

        foreach (var sub in s.Subscribers)
        {
            var index = Invariant(sub.Index);
            var c = sub.Counters;
            Add(_families.Received.WithLabels(_id, _transport, "subscriber", index)).IncTo(c.Received);
            Add(_families.ReceivedBytes.WithLabels(_id, _transport, "subscriber", index)).IncTo((double)c.Received * s.Spec.PayloadBytes);
            Add(_families.Lost.WithLabels(_id, _transport, "subscriber", index)).IncTo(c.Lost);
            Add(_families.SubscriberCorrupted.WithLabels(_id, _transport, "subscriber", index)).IncTo(c.Corrupted);
            Add(_families.Duplicated.WithLabels(_id, _transport, "subscriber", index)).IncTo(c.Duplicated);
            if (sub.Process is { } process)
            {
                UpdateAgent(index, _agentsSeen.Add(sub.Index), process);
            }
        }

        if (!_latencyReplay.TryAdvance(s.Latency, _latency))
        {
            // The source histogram restarted: so does the series (Prometheus reads the drop as a counter reset).
            _latency.Remove();
            _latency = _families.Latency.WithLabels(_id, _transport, _latencyKind);
            _latencyReplay = new HistogramReplay(ScenarioFamilies.LatencyBoundsSeconds);
            _latencyReplay.TryAdvance(s.Latency, _latency);
        }

        if (s.NoiseRatio is { } noise)
        {
            Add(_families.NoiseRatio.WithLabels(_id, _transport)).Set(noise);
        }

        if (s.SenderLag is { } senderLag)
        {
            UpdateSenderLag(senderLag);
        }

        if (s.Soak is { } soak)
        {
            UpdateSoak(soak);
        }

        IsFinal = final;
    }

    private void UpdateSoak(SoakSummary soak)
    {
        foreach (var verdict in Enum.GetValues<SoakStatus>())
        {
            Add(_families.SoakVerdict.WithLabels(_id, _transport, Snake(verdict.ToString()))).Set(verdict == soak.Verdict ? 1 : 0);
        }

        foreach (var (span, slope) in (ReadOnlySpan<(string, TrendSlope?)>)[("since_start", soak.Throughput.SinceStart), ("window", soak.Throughput.LastWindow)])
        {
            if (slope is { Mean: > 0 })
            {
                Add(_families.SoakThroughputDrift.WithLabels(_id, _transport, span)).Set(slope.Change / slope.Mean);
            }
        }

        foreach (var process in soak.Processes)
        {
            // The daemon has no subscriber index: its series carry an empty one.
            string subscriber = process.Index < 0 ? string.Empty : Invariant(process.Index);
            foreach (var resource in process.Resources)
            {
                string name = Snake(resource.Resource.ToString());
                Add(_families.SoakResource.WithLabels(_id, _transport, process.Role, subscriber, name)).Set(resource.Latest);
                if (resource.Trend.SinceStart is { } growth)
                {
                    Add(_families.SoakResourceGrowth.WithLabels(_id, _transport, process.Role, subscriber, name)).Set(growth.PerHour / 3600);
                }
            }
        }
    }

    private void UpdateSenderLag(LatencyBuckets senderLag)
    {
        _senderLag ??= _families.SenderLag.WithLabels(_id, _transport);
        if (!_senderLagReplay.TryAdvance(senderLag, _senderLag))
        {
            // Read while publishers record, a merged histogram can step back by a message: restart as latency does.
            _senderLag.Remove();
            _senderLag = _families.SenderLag.WithLabels(_id, _transport);
            _senderLagReplay = new HistogramReplay(ScenarioFamilies.LatencyBoundsSeconds);
            _senderLagReplay.TryAdvance(senderLag, _senderLag);
        }
    }

    public void Remove()
    {
        foreach (var child in _children)
        {
            child.Remove();
        }

        _latency.Remove();
        _senderLag?.Remove();
        _children.Clear();
    }

    public static string StateName(RunState state) => Snake(state.ToString());

    private void UpdateAgent(string subscriber, bool first, ProcessSample p)
    {
        T Agent<T>(Collector<T> family)
            where T : ChildBase
        {
            var child = family.WithLabels(_id, _transport, "agent", subscriber);
            return first ? Add(child) : child;
        }

        Agent(_families.AgentCpu).IncTo(p.CpuSeconds);
        Agent(_families.AgentResident).Set(p.RssBytes);
        Agent(_families.AgentPeakResident).Set(p.PeakRssBytes);
        Agent(_families.AgentGcHeap).Set(p.GcHeapBytes);
        Agent(_families.AgentGcLive).Set(p.GcLiveBytes);
        Agent(_families.AgentGcAllocated).IncTo(p.GcAllocatedBytes);
        Agent(_families.AgentGcPause).IncTo(p.GcPauseSeconds);
        foreach (var (generation, count) in (ReadOnlySpan<(string, long)>)[("0", p.GcGen0Collections), ("1", p.GcGen1Collections), ("2", p.GcGen2Collections)])
        {
            var child = _families.AgentGcCollections.WithLabels(_id, _transport, "agent", subscriber, generation);
            (first ? Add(child) : child).IncTo(count);
        }
    }

    private void Set(Gauge family, ref bool seen, double value)
    {
        var child = family.WithLabels(_id, _transport);
        if (!seen)
        {
            Add(child);
            seen = true;
        }

        child.Set(value);
    }

    /// <summary>Remembers a series for <see cref="Remove"/>; a child already remembered is harmless to add again.</summary>
    private T Add<T>(T child)
        where T : ChildBase
    {
        _children.Add(child);
        return child;
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary>WarmingUp → warming_up, AllToAll → all_to_all.</summary>
    private static string Snake(string pascal)
    {
        var text = new System.Text.StringBuilder(pascal.Length + 4);
        for (int i = 0; i < pascal.Length; i++)
        {
            if (char.IsUpper(pascal[i]) && i > 0)
            {
                text.Append('_');
            }

            text.Append(char.ToLowerInvariant(pascal[i]));
        }

        return text.ToString();
    }
}
