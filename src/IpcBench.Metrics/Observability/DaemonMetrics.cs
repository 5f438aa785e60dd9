using System.Diagnostics;
using System.Globalization;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;
using IpcBench.Workload;
using Microsoft.Extensions.Options;
using Prometheus;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// Everything /metrics shows, in a prometheus-net registry of the daemon's own (several daemons in one process, as in
/// tests, do not share series), set at scrape time by a before-collect callback from what the engine already counts:
/// the daemon's own process, the build, the scenario database, and per scenario its state, spec, message counters,
/// latency histogram and its agents' resource use. Nothing on a message path touches a metric. Running scenarios are
/// always exported; finished ones for the <see cref="DaemonOptions.MetricsRecentScenarios"/> most recent, so dashboards
/// show finished runs too.
/// </summary>
public sealed class DaemonMetrics
{
    private static readonly DateTime ProcessStart = ReadProcessStart();

    /// <summary>What /proc may not tell: absent until it does, rather than a made-up 0.</summary>
    private static readonly GaugeConfiguration OnceKnown = new() { SuppressInitialValue = true };

    private readonly ScenarioManager _scenarios;
    private readonly StoreWriter _store;
    private readonly IOptions<DaemonOptions> _options;
    private readonly ScenarioFamilies _families;
    private readonly Dictionary<string, ScenarioSeries> _series = new(StringComparer.Ordinal);
    // Concurrent scrapes run the callback concurrently; the latency replay must see each snapshot once.
    private readonly Lock _update = new();

    private readonly Counter _cpu;
    private readonly Gauge _resident;
    private readonly Gauge _virtual;
    private readonly Gauge _openFds;
    private readonly Gauge _maxFds;
    private readonly Gauge _threads;
    private readonly Counter _gcCollections;
    private readonly Gauge _totalMemory;
    private readonly Counter _storeFailures;
    private readonly Counter _storeWrites;
    private readonly Gauge _storeAvailable;
    private readonly Gauge _running;
    private readonly Counter _started;
    private readonly Gauge _idleAgents;
    private readonly SuiteManager? _suites;
    private readonly Gauge _suitesActive;
    private readonly Gauge _suiteScenariosDone;
    private readonly Gauge _suiteScenarios;
    private readonly Counter _suiteScenariosCompleted;

    public DaemonMetrics(ScenarioManager scenarios, StoreWriter store, IOptions<DaemonOptions> options, SuiteManager? suites = null)
    {
        _scenarios = scenarios;
        _suites = suites;
        _store = store;
        _options = options;
        Registry = Metrics.NewCustomRegistry();
        var metrics = Metrics.WithCustomRegistry(Registry);
        // Exemplars would name whatever activity is current during a scrape, never a message's.
        metrics.ExemplarBehavior = ExemplarBehavior.NoExemplars();

        var build = BuildInfo.Current;
        metrics.CreateGauge("ipcbench_build_info", "IpcBench build and machine: daemon version, .NET, iceoryx2 binding, cores, CPU model, kernel.",
                ["version", "dotnet_version", "iceoryx2_version", "cores", "cpu_model", "kernel"])
            .WithLabels(build.Version, build.DotnetVersion, build.Iceoryx2Version, build.Machine.LogicalCores.ToString(CultureInfo.InvariantCulture),
                build.Machine.CpuModel, build.Machine.Kernel)
            .Set(1);

        // The daemon process under the names Prometheus client libraries use. prometheus-net's DotNetStats is not
        // registered: it has none of process_resident_memory_bytes, _open_fds, _max_fds or _threads, and its
        // process_open_handles stats every descriptor on each scrape.
        _cpu = metrics.CreateCounter("process_cpu_seconds_total", "Total user and system CPU time spent by the daemon, in seconds (publishers run on its threads).");
        _resident = metrics.CreateGauge("process_resident_memory_bytes", "Resident memory size of the daemon in bytes.");
        _virtual = metrics.CreateGauge("process_virtual_memory_bytes", "Virtual memory size of the daemon in bytes.", OnceKnown);
        metrics.CreateGauge("process_start_time_seconds", "Start time of the daemon since the Unix epoch in seconds.")
            .Set((ProcessStart - DateTime.UnixEpoch).TotalSeconds);
        _openFds = metrics.CreateGauge("process_open_fds", "Number of open file descriptors of the daemon.", OnceKnown);
        _maxFds = metrics.CreateGauge("process_max_fds", "Maximum number of open file descriptors of the daemon.", OnceKnown);
        _threads = metrics.CreateGauge("process_threads", "Number of OS threads of the daemon.", OnceKnown);
        _gcCollections = metrics.CreateCounter("dotnet_collection_count_total", "Garbage collections of the daemon since it started, by generation.", "generation");
        _totalMemory = metrics.CreateGauge("dotnet_total_memory_bytes", "Bytes the daemon's garbage collector thinks are allocated.");

        _storeFailures = metrics.CreateCounter("ipcbench_store_write_failures_total",
            "Scenario snapshots and series points that did not reach the scenario database (failed, dropped, or no database); runs go on regardless.");
        _storeWrites = metrics.CreateCounter("ipcbench_store_writes_total", "Scenario snapshots and series points written to the scenario database.");
        _storeAvailable = metrics.CreateGauge("ipcbench_store_available",
            "1 when the scenario database (IpcBench:DatabasePath) is open, 0 when it could not be opened.");
        _running = metrics.CreateGauge("ipcbench_scenarios_running", "Scenarios of this daemon that have not finished.");
        _started = metrics.CreateCounter("ipcbench_scenarios_started_total", "Scenarios this daemon has started.");
        _idleAgents = metrics.CreateGauge("ipcbench_agents_idle",
            "Agent processes kept warm between scenarios, idle now (IpcBench:WarmAgentIdleSeconds).");
        // Suite progress without ids (bounded): what a dashboard row shows while a suite runs.
        _suitesActive = metrics.CreateGauge("ipcbench_suite_active", "Suites of this daemon that have not finished (running, or waiting for their admission slot).");
        _suiteScenariosDone = metrics.CreateGauge("ipcbench_suite_scenarios_done", "Scenarios finished of the oldest unfinished suite; 0 when none runs.");
        _suiteScenarios = metrics.CreateGauge("ipcbench_suite_scenarios", "Scenarios (cells x repetitions) of the oldest unfinished suite; 0 when none runs.");
        _suiteScenariosCompleted = metrics.CreateCounter("ipcbench_suite_scenarios_completed_total", "Scenarios of suites that have finished since the daemon started.");
        _families = new ScenarioFamilies(metrics);

        Registry.AddBeforeCollectCallback(Update);
    }

    /// <summary>What /metrics serves.</summary>
    public CollectorRegistry Registry { get; }

    /// <summary>Running scenarios, and the most recent finished ones, oldest first.</summary>
    public IReadOnlyList<ScenarioEntry> ExportedScenarios()
    {
        var all = _scenarios.List();
        int keepFinished = _options.Value.MetricsRecentScenarios;
        int finished = all.Count(s => s.IsCompleted);
        int skip = Math.Max(0, finished - keepFinished);
        var exported = new List<ScenarioEntry>(all.Count - skip);
        foreach (var held in all)
        {
            if (held.IsCompleted && skip > 0)
            {
                skip--;
                continue;
            }

            exported.Add(held);
        }

        return exported;
    }

    private void Update()
    {
        lock (_update)
        {
            UpdateProcess();
            _storeFailures.IncTo(_store.WriteFailures);
            _storeWrites.IncTo(_store.WritesCompleted);
            _storeAvailable.Set(_store.Store is null ? 0 : 1);
            UpdateScenarios();
            UpdateSuites();
        }
    }

    private void UpdateProcess()
    {
        _cpu.IncTo(ProcessMetrics.Take().CpuSeconds);
        _resident.Set(ProcessMetrics.ResidentBytes());
        SetIfKnown(_virtual, ProcFs.VirtualMemoryBytes());
        SetIfKnown(_openFds, ProcessMetrics.OpenFileDescriptors());
        SetIfKnown(_maxFds, ProcFs.MaxOpenFiles());
        SetIfKnown(_threads, ProcFs.Threads());
        for (int generation = 0; generation <= GC.MaxGeneration; generation++)
        {
            _gcCollections.WithLabels(generation.ToString(CultureInfo.InvariantCulture)).IncTo(GC.CollectionCount(generation));
        }

        _totalMemory.Set(GC.GetTotalMemory(forceFullCollection: false));
    }

    private void UpdateSuites()
    {
        if (_suites is null)
        {
            return;
        }

        var (active, done, total) = _suites.Progress();
        _suitesActive.Set(active);
        _suiteScenariosDone.Set(done);
        _suiteScenarios.Set(total);
        _suiteScenariosCompleted.IncTo(_suites.CompletedCells);
    }

    private void UpdateScenarios()
    {
        var exported = ExportedScenarios();
        _running.Set(exported.Count(s => !s.IsCompleted));
        _started.IncTo(_scenarios.StartedCount);
        _idleAgents.Set(_scenarios.IdleAgents);
        foreach (var held in exported)
        {
            if (_series.TryGetValue(held.Id, out var series) && series.IsFinal)
            {
                continue;
            }

            // Completed before ReadMetrics looks: the snapshot is then the final one.
            bool final = held.IsCompleted;
            var snapshot = held.ReadMetrics();
            if (series is null)
            {
                series = new ScenarioSeries(_families, snapshot);
                _series.Add(held.Id, series);
            }

            series.Update(snapshot, final);
        }

        foreach (var id in _series.Keys.Where(id => !exported.Any(held => held.Id == id)).ToList())
        {
            _series.Remove(id, out var gone);
            gone!.Remove();
        }
    }

    private static void SetIfKnown(Gauge gauge, double? value)
    {
        if (value is { } known)
        {
            gauge.Set(known);
        }
    }

    private static DateTime ReadProcessStart()
    {
        using var process = Process.GetCurrentProcess();
        return process.StartTime.ToUniversalTime();
    }
}
