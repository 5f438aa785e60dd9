using IpcBench.Daemon.Scenarios;
using Prometheus;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// The per-scenario metric families. Publisher and subscriber series of one family carry different labels (publisher or
/// subscriber): prometheus-net keeps them as two collectors of one family, under one HELP and TYPE.
/// </summary>
internal sealed class ScenarioFamilies
{
    private const string CorruptedHelp =
        "Messages that failed verification: at a subscriber (header or payload), or at a publisher (a round trip's echo).";

    private static readonly string[] Scenario = ["scenario", "transport"];
    private static readonly string[] Publisher = ["scenario", "transport", "role", "publisher"];
    private static readonly string[] Subscriber = ["scenario", "transport", "role", "subscriber"];

    public ScenarioFamilies(IMetricFactory metrics)
    {
        Info = metrics.CreateGauge("ipcbench_scenario_info", "A scenario's spec as run (N publishers, M subscribers, payload, ...); always 1.",
            [.. Scenario, "name", "publishers", "subscribers", "payload_bytes", "topology", "payload_access", "mode", "wait_strategy", "rate_per_publisher"]);
        State = metrics.CreateGauge("ipcbench_scenario_state", "1 for the state a scenario is in, 0 for the others.", [.. Scenario, "state"]);
        StartTime = metrics.CreateGauge("ipcbench_scenario_start_time_seconds",
            "When a scenario's publishers started (warmup included), seconds since the Unix epoch.", Scenario);
        EndTime = metrics.CreateGauge("ipcbench_scenario_end_time_seconds",
            "When a scenario ended (completed, stopped or failed), seconds since the Unix epoch.", Scenario);
        MeasuredSeconds = metrics.CreateGauge("ipcbench_scenario_measured_seconds", "Length of a scenario's measured window so far (after warmup).", Scenario);
        MessagesPerSecond = metrics.CreateGauge("ipcbench_scenario_measured_messages_per_second",
            "Messages delivered per second over the measured window so far; a finished scenario's result.", Scenario);
        OfferedMessagesPerSecond = metrics.CreateGauge("ipcbench_scenario_offered_messages_per_second",
            "Rate-limited scenarios: deliveries per second offered (rate per publisher x publishers x subscribers each reaches), to set " +
            "against ipcbench_messages_received_total's rate; absent for closed-loop scenarios.", Scenario);
        BytesPerSecond = metrics.CreateGauge("ipcbench_scenario_measured_bytes_per_second",
            "Payload bytes delivered per second over the measured window so far; a finished scenario's result.", Scenario);

        Sent = metrics.CreateCounter("ipcbench_messages_sent_total",
            "Messages a publisher sent (once per message, whatever its fan-out), warmup included.", Publisher);
        PublisherCorrupted = metrics.CreateCounter("ipcbench_messages_corrupted_total", CorruptedHelp, Publisher);
        Received = metrics.CreateCounter("ipcbench_messages_received_total", "Messages a subscriber received, warmup included.", Subscriber);
        ReceivedBytes = metrics.CreateCounter("ipcbench_received_bytes_total",
            "Payload bytes a subscriber received (message header excluded), warmup included.", Subscriber);
        Lost = metrics.CreateCounter("ipcbench_messages_lost_total",
            "Messages a subscriber found missing (sequence gaps, and the tail its publishers' end-of-stream says it never got).", Subscriber);
        SubscriberCorrupted = metrics.CreateCounter("ipcbench_messages_corrupted_total", CorruptedHelp, Subscriber);
        Duplicated = metrics.CreateCounter("ipcbench_messages_duplicated_total", "Messages a subscriber received again or out of order.", Subscriber);

        Latency = metrics.CreateHistogram("ipcbench_latency_seconds",
            "Message latency: one way (send to receive, across processes) or round trip, from the scenario's HDR histogram.",
            [.. Scenario, "kind"], new HistogramConfiguration { Buckets = LatencyBoundsSeconds });

        NoiseRatio = metrics.CreateGauge("ipcbench_scenario_noise_ratio",
            "CPU used by other processes than the daemon and its agents, as a share (0..1) of the whole machine, over a scenario's measured window so far.",
            Scenario);
        SenderLag = metrics.CreateHistogram("ipcbench_sender_lag_seconds",
            "Rate-limited scenarios: how late each measured message left its publisher against its intended send time, all publishers merged.",
            Scenario, new HistogramConfiguration { Buckets = LatencyBoundsSeconds });

        AgentCpu = metrics.CreateCounter("ipcbench_agent_cpu_seconds_total",
            "User and system CPU seconds of an agent process since it started, as it last reported.", Subscriber);
        AgentResident = metrics.CreateGauge("ipcbench_agent_resident_memory_bytes", "Resident memory of an agent process, as it last reported.", Subscriber);
        AgentPeakResident = metrics.CreateGauge("ipcbench_agent_peak_resident_memory_bytes",
            "Peak resident memory of an agent process, as it last reported.", Subscriber);
        AgentGcCollections = metrics.CreateCounter("ipcbench_agent_gc_collections_total",
            "Garbage collections of an agent process since it started, by generation.", [.. Subscriber, "generation"]);
        AgentGcHeap = metrics.CreateGauge("ipcbench_agent_gc_heap_bytes", "GC heap size of an agent process after its last collection.", Subscriber);
        AgentGcLive = metrics.CreateGauge("ipcbench_agent_gc_live_bytes",
            "Live managed heap of an agent process: after its latest full collection (one ends every scenario), less fragmentation.", Subscriber);
        AgentGcAllocated = metrics.CreateCounter("ipcbench_agent_gc_allocated_bytes_total", "Bytes an agent process has allocated since it started.", Subscriber);
        AgentGcPause = metrics.CreateCounter("ipcbench_agent_gc_pause_seconds_total", "Time an agent process spent paused for garbage collection.", Subscriber);

        SoakVerdict = metrics.CreateGauge("ipcbench_soak_verdict",
            "1 for a soak's current verdict (judging, holding, drifting, leaking, losing), 0 for the others (docs/control-plane.md, Soak).",
            [.. Scenario, "verdict"]);
        SoakThroughputDrift = metrics.CreateGauge("ipcbench_soak_throughput_drift_ratio",
            "A soak's fitted change of delivered msg/s over the span judged, as a share of its mean (since the start, or over the last window).",
            [.. Scenario, "span"]);
        SoakResource = metrics.CreateGauge("ipcbench_soak_resource",
            "A process's resource at the soak's latest point, in the unit its name ends with (managed_heap_bytes, rss_bytes, shared_memory_bytes, threads, descriptors).",
            [.. Subscriber, "resource"]);
        SoakResourceGrowth = metrics.CreateGauge("ipcbench_soak_resource_growth_per_second",
            "The fitted growth of a process's resource since the soak's measured window began, in its unit per second.",
            [.. Subscriber, "resource"]);
    }

    public static double[] LatencyBoundsSeconds { get; } = [.. LatencyBuckets.UpperBoundsNs.Select(ns => ns / 1e9)];

    public Gauge Info { get; }

    public Gauge State { get; }

    public Gauge StartTime { get; }

    public Gauge EndTime { get; }

    public Gauge MeasuredSeconds { get; }

    public Gauge MessagesPerSecond { get; }

    public Gauge OfferedMessagesPerSecond { get; }

    public Gauge BytesPerSecond { get; }

    public Counter Sent { get; }

    public Counter PublisherCorrupted { get; }

    public Counter Received { get; }

    public Counter ReceivedBytes { get; }

    public Counter Lost { get; }

    public Counter SubscriberCorrupted { get; }

    public Counter Duplicated { get; }

    public Histogram Latency { get; }

    public Gauge NoiseRatio { get; }

    public Histogram SenderLag { get; }

    public Counter AgentCpu { get; }

    public Gauge AgentResident { get; }

    public Gauge AgentPeakResident { get; }

    public Counter AgentGcCollections { get; }

    public Gauge AgentGcHeap { get; }

    public Gauge AgentGcLive { get; }

    public Gauge SoakVerdict { get; }

    public Gauge SoakThroughputDrift { get; }

    public Gauge SoakResource { get; }

    public Gauge SoakResourceGrowth { get; }

    public Counter AgentGcAllocated { get; }

    public Counter AgentGcPause { get; }
}
