using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;
using IpcBench.V1;
using IpcBench.Workload;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// Everything /metrics shows, built at scrape time from what the engine already counts: the daemon's own process,
/// the build, and per scenario its state, spec, message counters, latency histogram and its agents' resource use.
/// Nothing on a message path touches a metric. Running scenarios are always exported; finished ones for the
/// <see cref="DaemonOptions.MetricsRecentScenarios"/> most recent, so dashboards show finished runs too.
/// </summary>
public sealed class DaemonMetrics(ScenarioManager scenarios, StoreWriter store, IOptions<DaemonOptions> options)
{
    /// <summary>Finished scenarios' series, formatted once: they never change again.</summary>
    private readonly ConcurrentDictionary<string, PrometheusExposition> _finished = new(StringComparer.Ordinal);

    private static readonly double[] LatencyBoundsSeconds = [.. LatencyBuckets.UpperBoundsNs.Select(ns => ns / 1e9)];
    private static readonly DateTime ProcessStart = ReadProcessStart();

    public string Render() => Collect().Render();

    public PrometheusExposition Collect()
    {
        var metrics = new PrometheusExposition();
        WriteBuildInfo(metrics);
        WriteProcess(metrics);
        WriteStore(metrics);
        WriteScenarios(metrics);
        return metrics;
    }

    private void WriteStore(PrometheusExposition metrics)
    {
        metrics.Counter("ipcbench_store_write_failures_total",
            "Scenario snapshots and series points that did not reach the scenario database (failed, dropped, or no database); runs go on regardless.",
            store.WriteFailures);
        metrics.Counter("ipcbench_store_writes_total", "Scenario snapshots and series points written to the scenario database.", store.WritesCompleted);
        metrics.Gauge("ipcbench_store_available", "1 when the scenario database (IpcBench:DatabasePath) is open, 0 when it could not be opened.",
            store.Store is null ? 0 : 1);
    }

    /// <summary>Running scenarios, and the most recent finished ones, oldest first.</summary>
    public IReadOnlyList<ScenarioRun> ExportedScenarios()
    {
        var all = scenarios.List();
        int keepFinished = options.Value.MetricsRecentScenarios;
        int finished = all.Count(s => s.Completion.IsCompleted);
        int skip = Math.Max(0, finished - keepFinished);
        var exported = new List<ScenarioRun>(all.Count - skip);
        foreach (var run in all)
        {
            if (run.Completion.IsCompleted && skip > 0)
            {
                skip--;
                continue;
            }

            exported.Add(run);
        }

        return exported;
    }

    private static void WriteBuildInfo(PrometheusExposition metrics)
    {
        var build = BuildInfo.Current;
        metrics.Gauge("ipcbench_build_info", "IpcBench build and machine: daemon version, .NET, iceoryx2 binding, cores, CPU model, kernel.", 1,
            ("version", build.Version),
            ("dotnet_version", build.DotnetVersion),
            ("iceoryx2_version", build.Iceoryx2Version),
            ("cores", build.Machine.LogicalCores.ToString(CultureInfo.InvariantCulture)),
            ("cpu_model", build.Machine.CpuModel),
            ("kernel", build.Machine.Kernel));
    }

    /// <summary>The daemon process, under the names Prometheus client libraries use (process_*, dotnet_*).</summary>
    private static void WriteProcess(PrometheusExposition metrics)
    {
        var usage = ProcessMetrics.Take();
        metrics.Counter("process_cpu_seconds_total", "Total user and system CPU time spent by the daemon, in seconds (publishers run on its threads).", usage.CpuSeconds);
        metrics.Gauge("process_resident_memory_bytes", "Resident memory size of the daemon in bytes.", ProcessMetrics.ResidentBytes());
        if (ReadStatm() is { } virtualBytes)
        {
            metrics.Gauge("process_virtual_memory_bytes", "Virtual memory size of the daemon in bytes.", virtualBytes);
        }

        metrics.Gauge("process_start_time_seconds", "Start time of the daemon since the Unix epoch in seconds.",
            (ProcessStart - DateTime.UnixEpoch).TotalSeconds);
        if (ProcessMetrics.OpenFileDescriptors() is { } open)
        {
            metrics.Gauge("process_open_fds", "Number of open file descriptors of the daemon.", open);
        }

        if (ReadMaxOpenFiles() is { } max)
        {
            metrics.Gauge("process_max_fds", "Maximum number of open file descriptors of the daemon.", max);
        }

        if (ReadThreads() is { } threads)
        {
            metrics.Gauge("process_threads", "Number of OS threads of the daemon.", threads);
        }

        for (int generation = 0; generation <= GC.MaxGeneration; generation++)
        {
            metrics.Counter("dotnet_collection_count_total", "Garbage collections of the daemon since it started, by generation.", GC.CollectionCount(generation),
                ("generation", generation.ToString(CultureInfo.InvariantCulture)));
        }

        metrics.Gauge("dotnet_total_memory_bytes", "Bytes the daemon's garbage collector thinks are allocated.", GC.GetTotalMemory(forceFullCollection: false));
    }

    private void WriteScenarios(PrometheusExposition metrics)
    {
        var exported = ExportedScenarios();
        metrics.Gauge("ipcbench_scenarios_running", "Scenarios of this daemon that have not finished.", exported.Count(s => !s.Completion.IsCompleted));
        metrics.Counter("ipcbench_scenarios_started_total", "Scenarios this daemon has started.", scenarios.StartedCount);

        foreach (var run in exported)
        {
            // Completed before ReadMetrics looks: its snapshot is the final one, and so is the text made from it.
            if (run.Completion.IsCompleted)
            {
                metrics.Append(_finished.GetOrAdd(run.Id, _ =>
                {
                    var block = new PrometheusExposition();
                    WriteScenario(block, run.ReadMetrics());
                    return block;
                }));
            }
            else
            {
                WriteScenario(metrics, run.ReadMetrics());
            }
        }

        foreach (var id in _finished.Keys)
        {
            if (!exported.Any(run => run.Id == id))
            {
                _finished.TryRemove(id, out _);
            }
        }
    }

    private static void WriteScenario(PrometheusExposition metrics, ScenarioMetricsSnapshot s)
    {
        var id = ("scenario", s.Id);
        var transport = ("transport", s.Spec.Transport.Id);
        var spec = s.Spec;
        metrics.Gauge("ipcbench_scenario_info", "A scenario's spec as run (N publishers, M subscribers, payload, ...); always 1.", 1,
            id, transport,
            ("name", spec.Name),
            ("publishers", spec.Publishers.ToString(CultureInfo.InvariantCulture)),
            ("subscribers", spec.Subscribers.ToString(CultureInfo.InvariantCulture)),
            ("payload_bytes", spec.PayloadBytes.ToString(CultureInfo.InvariantCulture)),
            ("topology", Snake(spec.Topology.ToString())),
            ("payload_access", Snake(spec.PayloadAccess.ToString())),
            ("mode", Snake(spec.Mode.ToString())),
            ("wait_strategy", Snake(spec.WaitMode.ToString())),
            ("rate_per_publisher", PrometheusExposition.FormatValue(spec.RatePerPublisher)));

        foreach (var state in States)
        {
            metrics.Gauge("ipcbench_scenario_state", "1 for the state a scenario is in, 0 for the others.", state == s.State ? 1 : 0,
                id, transport, ("state", StateName(state)));
        }

        if (s.StartedAt is { } started)
        {
            metrics.Gauge("ipcbench_scenario_start_time_seconds", "When a scenario's publishers started (warmup included), seconds since the Unix epoch.",
                (started - DateTime.UnixEpoch).TotalSeconds, id, transport);
        }

        if (s.EndedAt is { } ended)
        {
            metrics.Gauge("ipcbench_scenario_end_time_seconds", "When a scenario ended (completed, stopped or failed), seconds since the Unix epoch.",
                (ended - DateTime.UnixEpoch).TotalSeconds, id, transport);
        }

        metrics.Gauge("ipcbench_scenario_measured_seconds", "Length of a scenario's measured window so far (after warmup).", s.MeasuredSeconds, id, transport);
        metrics.Gauge("ipcbench_scenario_measured_messages_per_second",
            "Messages delivered per second over the measured window so far; a finished scenario's result.",
            s.MeasuredSeconds > 0 ? s.MeasuredMessages / s.MeasuredSeconds : 0, id, transport);
        metrics.Gauge("ipcbench_scenario_measured_bytes_per_second",
            "Payload bytes delivered per second over the measured window so far; a finished scenario's result.",
            s.MeasuredSeconds > 0 ? s.MeasuredBytes / s.MeasuredSeconds : 0, id, transport);

        foreach (var p in s.Publishers)
        {
            var publisher = ("publisher", p.Index.ToString(CultureInfo.InvariantCulture));
            metrics.Counter("ipcbench_messages_sent_total", "Messages a publisher sent (once per message, whatever its fan-out), warmup included.",
                p.Sent, id, transport, ("role", "publisher"), publisher);
            metrics.Counter("ipcbench_messages_corrupted_total",
                "Messages that failed verification: at a subscriber (header or payload), or at a publisher (a round trip's echo).",
                p.BadEchoes, id, transport, ("role", "publisher"), publisher);
        }

        foreach (var sub in s.Subscribers)
        {
            var subscriber = ("subscriber", sub.Index.ToString(CultureInfo.InvariantCulture));
            var role = ("role", "subscriber");
            var c = sub.Counters;
            metrics.Counter("ipcbench_messages_received_total", "Messages a subscriber received, warmup included.", c.Received, id, transport, role, subscriber);
            metrics.Counter("ipcbench_received_bytes_total", "Payload bytes a subscriber received (message header excluded), warmup included.",
                (double)c.Received * spec.PayloadBytes, id, transport, role, subscriber);
            metrics.Counter("ipcbench_messages_lost_total",
                "Messages a subscriber found missing (sequence gaps, and the tail its publishers' end-of-stream says it never got).",
                c.Lost, id, transport, role, subscriber);
            metrics.Counter("ipcbench_messages_corrupted_total",
                "Messages that failed verification: at a subscriber (header or payload), or at a publisher (a round trip's echo).",
                c.Corrupted, id, transport, role, subscriber);
            metrics.Counter("ipcbench_messages_duplicated_total", "Messages a subscriber received again or out of order.",
                c.Duplicated, id, transport, role, subscriber);
        }

        metrics.Histogram("ipcbench_latency_seconds",
            "Message latency: one way (send to receive, across processes) or round trip, from the scenario's HDR histogram.",
            LatencyBoundsSeconds, s.Latency.Cumulative, s.Latency.Count, s.Latency.SumSeconds,
            id, transport, ("kind", spec.RoundTrip ? "round_trip" : "one_way"));

        foreach (var sub in s.Subscribers)
        {
            if (sub.Process is not { } p)
            {
                continue;
            }

            var subscriber = ("subscriber", sub.Index.ToString(CultureInfo.InvariantCulture));
            var role = ("role", "agent");
            metrics.Counter("ipcbench_agent_cpu_seconds_total", "User and system CPU seconds of an agent process since it started, as it last reported.",
                p.CpuSeconds, id, transport, role, subscriber);
            metrics.Gauge("ipcbench_agent_resident_memory_bytes", "Resident memory of an agent process, as it last reported.",
                p.RssBytes, id, transport, role, subscriber);
            metrics.Gauge("ipcbench_agent_peak_resident_memory_bytes", "Peak resident memory of an agent process, as it last reported.",
                p.PeakRssBytes, id, transport, role, subscriber);
            foreach (var (generation, count) in (ReadOnlySpan<(string, long)>)[("0", p.GcGen0Collections), ("1", p.GcGen1Collections), ("2", p.GcGen2Collections)])
            {
                metrics.Counter("ipcbench_agent_gc_collections_total", "Garbage collections of an agent process since it started, by generation.",
                    count, id, transport, role, subscriber, ("generation", generation));
            }

            metrics.Gauge("ipcbench_agent_gc_heap_bytes", "GC heap size of an agent process after its last collection.",
                p.GcHeapBytes, id, transport, role, subscriber);
            metrics.Counter("ipcbench_agent_gc_allocated_bytes_total", "Bytes an agent process has allocated since it started.",
                p.GcAllocatedBytes, id, transport, role, subscriber);
            metrics.Counter("ipcbench_agent_gc_pause_seconds_total", "Time an agent process spent paused for garbage collection.",
                p.GcPauseSeconds, id, transport, role, subscriber);
        }
    }

    private static readonly ScenarioState[] States =
    [
        ScenarioState.Pending, ScenarioState.Starting, ScenarioState.WarmingUp, ScenarioState.Running,
        ScenarioState.Stopping, ScenarioState.Completed, ScenarioState.Stopped, ScenarioState.Failed,
    ];

    public static string StateName(ScenarioState state) => Snake(state.ToString());

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

    private static DateTime ReadProcessStart()
    {
        using var process = Process.GetCurrentProcess();
        return process.StartTime.ToUniversalTime();
    }

    private static ulong? ReadStatm()
    {
        try
        {
            var fields = File.ReadAllText("/proc/self/statm").Split(' ', 2);
            return ulong.TryParse(fields[0], NumberStyles.None, CultureInfo.InvariantCulture, out var pages) ? pages * (ulong)Environment.SystemPageSize : null;
        }
        catch (IOException)
        {
            return null;
        }
    }

    private static int? ReadThreads()
    {
        try
        {
            // pid (comm) state ppid ...: num_threads is field 20, the 18th after the comm.
            var stat = File.ReadAllText("/proc/self/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return fields.Length > 17 && int.TryParse(fields[17], NumberStyles.None, CultureInfo.InvariantCulture, out var threads) ? threads : null;
        }
        catch (IOException)
        {
            return null;
        }
    }

    private static long? ReadMaxOpenFiles()
    {
        try
        {
            foreach (var line in File.ReadLines("/proc/self/limits"))
            {
                if (line.StartsWith("Max open files", StringComparison.Ordinal))
                {
                    var fields = line["Max open files".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return fields.Length > 0 && long.TryParse(fields[0], NumberStyles.None, CultureInfo.InvariantCulture, out var soft) ? soft : null;
                }
            }
        }
        catch (IOException)
        {
        }

        return null;
    }
}
