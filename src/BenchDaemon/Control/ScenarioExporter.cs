using System.Globalization;
using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Reports;
using IpcBench.Daemon.Schema;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The documents ExportScenarios answers with and `run --out` writes (results.json, results.csv, results-series.csv,
/// results.hlog): one code path, so a file from either is read the same way. Views of the engine's records through
/// the one mapping (<see cref="ScenarioProtos"/>): the JSON is proto JSON of <see cref="ScenarioExport"/>, the CSVs are
/// written as every CSV of the daemon is (<see cref="CsvDocument"/>).
/// </summary>
public static class ScenarioExporter
{
    public const string JsonContentType = "application/json";
    public const string CsvContentType = "text/csv";
    public const string HdrLogContentType = "text/plain";
    public const string HtmlContentType = "text/html";

    // Proto field names (as grpcurl prints them) and zeros included: a spreadsheet or jq script should not have to
    // know that an absent messages_lost means 0.
    private static readonly JsonFormatter Formatter = new(JsonFormatter.Settings.Default
        .WithFormatDefaultValues(true)
        .WithPreserveProtoFieldNames(true));

    public static string Json(IReadOnlyList<ScenarioResult> results, DateTime exportedAt)
    {
        var export = new ScenarioExport { ExportedAt = Timestamp.FromDateTime(exportedAt.ToUniversalTime()) };
        export.Scenarios.AddRange(results.Select(ScenarioProtos.ToProto));
        return Formatter.Format(export) + "\n";
    }

    /// <summary>
    /// One HdrHistogram log for all <paramref name="scenarios"/>, each interval tagged with its scenario's id: one file
    /// per export, as for JSON and CSV, which HdrHistogram's tools split by tag. HistogramLogWriter writes the lines
    /// (absolute start timestamps, interval lengths, maxima in ms, compressed histograms in base64).
    /// </summary>
    public static string HdrLog(IReadOnlyList<(string ScenarioId, IReadOnlyList<HdrInterval> Intervals)> scenarios)
    {
        var histograms = new List<HdrHistogram.HistogramBase>();
        foreach (var (scenarioId, intervals) in scenarios)
        {
            foreach (var interval in intervals)
            {
                var histogram = HistogramCodec.Decode(interval.Histogram);
                histogram.Tag = scenarioId;
                histogram.StartTimeStamp = interval.StartMs;
                histogram.EndTimeStamp = interval.EndMs;
                histograms.Add(histogram);
            }
        }

        long startMs = histograms.Count > 0 ? histograms.Min(h => h.StartTimeStamp) : 0;
        using var stream = new MemoryStream();
        using (var writer = new HdrHistogram.HistogramLogWriter(stream))
        {
            writer.Write(DateTimeOffset.FromUnixTimeMilliseconds(startMs).UtcDateTime, [.. histograms]);
        }

        // The writer's own text encoding (with its byte order mark) read back: the string is what files get, as UTF-8.
        stream.Position = 0;
        using var reader = new StreamReader(stream, detectEncodingFromByteOrderMarks: true);
        return reader.ReadToEnd();
    }

    /// <summary>A state's proto name (SCENARIO_STATE_COMPLETED), as the CSV and the soak page show it.</summary>
    public static string StateName(RunState state) => EnumName(ScenarioProtos.ToProto(state));

    public static ScenarioExport ParseJson(string json) => JsonParser.Default.Parse<ScenarioExport>(json);

    /// <summary>Summary columns; times in RFC 3339, durations in seconds, latencies in nanoseconds.</summary>
    public static readonly string[] SummaryHeader =
    [
        "id", "name", "transport", "state", "error", "storage_error", "created_at", "started_at", "ended_at",
        "publishers", "subscribers", "payload_bytes", "topology", "payload_access", "mode", "wait_strategy", "rate_per_publisher",
        "duration_seconds", "warmup_seconds",
        "messages_sent", "messages_received", "messages_expected", "messages_lost", "messages_corrupted", "messages_duplicated",
        "measured_messages", "measured_seconds", "messages_per_second", "bytes_per_second",
        "latency_kind", "latency_samples", "latency_min_ns", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns",
        "latency_max_ns", "latency_mean_ns",
        "daemon_cpu_percent", "agents_cpu_percent", "daemon_cpu_seconds", "agents_cpu_seconds", "agents", "peak_rss_bytes",
        "cpu_model", "logical_cores", "kernel", "dotnet_version", "os", "hostname", "core_to_core_round_trip_ns", "core_to_core_cores",
        "series_points",
        // Added after series_points so earlier columns keep their positions.
        "noise_percent", "warmup_noise_percent", "load_average_1m",
        "sender_lag_samples", "sender_lag_p50_ns", "sender_lag_p99_ns", "sender_lag_max_ns", "sender_lag_dominates",
        "publisher_cpus", "subscriber_cpus", "smt_siblings", "same_physical_core", "shared_caches", "numa_nodes",
        "cpufreq_driver", "cpufreq_governor", "isolated_cpus", "nohz_full_cpus", "kernel_parameters", "cgroup_cpu_quota",
        "transparent_huge_pages", "smt",
        "validity", "validity_detail",
    ];

    public static readonly string[] SeriesHeader =
    [
        "scenario_id", "elapsed_seconds", "messages_per_second", "bytes_per_second", "latency_kind", "latency_samples",
        "latency_min_ns", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "latency_mean_ns",
        "daemon_cpu_percent", "agents_cpu_percent",
    ];

    public static string SummaryCsv(IReadOnlyList<ScenarioResult> results) =>
        CsvDocument.Write(SummaryHeader, results.Select(ScenarioProtos.ToProto).Select(SummaryRow));

    public static string SeriesCsv(IReadOnlyList<ScenarioResult> results) =>
        CsvDocument.Write(SeriesHeader, results.Select(ScenarioProtos.ToProto).SelectMany(SeriesRows));

    private static CsvField[] SummaryRow(ScenarioRecord record)
    {
        var s = record.Scenario ?? new Scenario();
        var spec = s.Spec ?? new ScenarioSpec();
        var stats = s.Stats ?? new ScenarioStats();
        var latency = stats.Latency ?? new LatencyStats();
        var env = s.Environment ?? new EnvironmentInfo();
        var lag = stats.SenderLag;
        var placement = env.Placement;
        var daemon = stats.Processes.Where(p => p.Role == "daemon").ToList();
        var agents = stats.Processes.Where(p => p.Role == "agent").ToList();
        return
        [
            s.Id, spec.Name, spec.Transport, EnumName(s.State), s.Error, s.StorageError, Time(s.CreatedAt), Time(s.StartedAt), Time(s.EndedAt),
            spec.Publishers, spec.Subscribers, spec.PayloadBytes, EnumName(spec.Topology), EnumName(spec.PayloadAccess),
            EnumName(spec.Mode), EnumName(spec.WaitStrategy), spec.RatePerPublisher,
            Seconds(spec.Duration), Seconds(spec.Warmup),
            stats.MessagesSent, stats.MessagesReceived, stats.MessagesExpected, stats.MessagesLost,
            stats.MessagesCorrupted, stats.MessagesDuplicated,
            stats.MeasuredMessages, Seconds(stats.MeasuredDuration), stats.MessagesPerSecond, stats.BytesPerSecond,
            EnumName(latency.Kind), latency.Samples, Nanos(latency.Min), Nanos(latency.P50), Nanos(latency.P90), Nanos(latency.P99),
            Nanos(latency.P999), Nanos(latency.Max), Nanos(latency.Mean),
            daemon.Sum(p => p.CpuPercent), agents.Sum(p => p.CpuPercent),
            daemon.Sum(p => p.CpuSeconds), agents.Sum(p => p.CpuSeconds), agents.Count,
            stats.Processes.Count == 0 ? 0UL : stats.Processes.Max(p => p.PeakRssBytes),
            env.CpuModel, env.LogicalCores, env.Kernel, env.DotnetVersion, env.Os, env.Hostname,
            Nanos(env.CoreToCoreRoundTrip), env.CoreToCoreCores,
            record.Series.Count,
            stats.HasNoisePercent ? stats.NoisePercent : string.Empty,
            stats.HasWarmupNoisePercent ? stats.WarmupNoisePercent : string.Empty,
            stats.HasLoadAverage1M ? stats.LoadAverage1M : string.Empty,
            lag is null ? string.Empty : lag.Samples, Nanos(lag?.P50), Nanos(lag?.P99), Nanos(lag?.Max),
            lag is null ? string.Empty : Bool(lag.Dominates),
            placement?.PublisherCpus, placement?.SubscriberCpus, placement?.SmtSiblings,
            placement is { HasSamePhysicalCore: true } ? Bool(placement.SamePhysicalCore) : string.Empty,
            placement is null ? string.Empty : string.Join(';', placement.SharedCaches), placement?.NumaNodes,
            placement?.CpufreqDriver, placement?.CpufreqGovernor, placement?.IsolatedCpus,
            placement?.NohzFullCpus, placement?.KernelParameters, placement?.CgroupCpuQuota,
            placement?.TransparentHugePages, placement?.Smt,
            string.Join(';', stats.Validity.Select(v => EnumName(v.Kind))), string.Join("; ", stats.Validity.Select(v => v.Detail)),
        ];
    }

    private static IEnumerable<CsvField[]> SeriesRows(ScenarioRecord record) => record.Series.Select(point =>
    {
        var latency = point.Latency ?? new LatencyStats();
        return new CsvField[]
        {
            record.Scenario?.Id, Seconds(point.Elapsed), point.MessagesPerSecond, point.BytesPerSecond,
            EnumName(latency.Kind), latency.Samples, Nanos(latency.Min), Nanos(latency.P50), Nanos(latency.P90), Nanos(latency.P99),
            Nanos(latency.P999), Nanos(latency.Max), Nanos(latency.Mean),
            point.DaemonCpuPercent, point.AgentsCpuPercent,
        };
    });

    private static string EnumName<T>(T value)
        where T : struct, System.Enum =>
        ControlReflection.Descriptor.EnumTypes.FirstOrDefault(e => e.ClrType == typeof(T))?.FindValueByNumber(Convert.ToInt32(value, CultureInfo.InvariantCulture))?.Name
        ?? Convert.ToInt32(value, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture);

    private static string Time(Timestamp? time) =>
        time is null ? string.Empty : time.ToDateTime().ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", CultureInfo.InvariantCulture);

    // An absent duration is an empty field, not 0: "not measured" and "took no time" read differently.
    private static CsvField Seconds(Duration? duration) =>
        duration is null ? string.Empty : ScenarioProtos.ToNanoseconds(duration) / 1e9;

    private static CsvField Nanos(Duration? duration) =>
        duration is null ? string.Empty : ScenarioProtos.ToNanoseconds(duration);

    private static string Bool(bool value) => value ? "true" : "false";
}
