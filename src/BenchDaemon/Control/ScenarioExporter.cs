using System.Globalization;
using System.Text;
using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Schema;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The documents ExportScenarios answers with and `run --out` writes (results.json, results.csv, results-series.csv,
/// results.hlog): one code path, so a file from either is read the same way. Views of the engine's records through
/// the one mapping (<see cref="ScenarioProtos"/>): the JSON is proto JSON of <see cref="ScenarioExport"/>.
/// </summary>
public static class ScenarioExporter
{
    public const string JsonContentType = "application/json";
    public const string CsvContentType = "text/csv";
    public const string HdrLogContentType = "text/plain";

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
    ];

    public static readonly string[] SeriesHeader =
    [
        "scenario_id", "elapsed_seconds", "messages_per_second", "bytes_per_second", "latency_kind", "latency_samples",
        "latency_min_ns", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "latency_mean_ns",
        "daemon_cpu_percent", "agents_cpu_percent",
    ];

    public static string SummaryCsv(IReadOnlyList<ScenarioResult> results)
    {
        var records = results.Select(ScenarioProtos.ToProto);
        var csv = new StringBuilder();
        Row(csv, SummaryHeader);
        foreach (var record in records)
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
            Row(csv,
            [
                s.Id, spec.Name, spec.Transport, EnumName(s.State), s.Error, s.StorageError, Time(s.CreatedAt), Time(s.StartedAt), Time(s.EndedAt),
                Int(spec.Publishers), Int(spec.Subscribers), Int(spec.PayloadBytes), EnumName(spec.Topology), EnumName(spec.PayloadAccess),
                EnumName(spec.Mode), EnumName(spec.WaitStrategy), Number(spec.RatePerPublisher),
                Seconds(spec.Duration), Seconds(spec.Warmup),
                Int(stats.MessagesSent), Int(stats.MessagesReceived), Int(stats.MessagesExpected), Int(stats.MessagesLost),
                Int(stats.MessagesCorrupted), Int(stats.MessagesDuplicated),
                Int(stats.MeasuredMessages), Seconds(stats.MeasuredDuration), Number(stats.MessagesPerSecond), Number(stats.BytesPerSecond),
                EnumName(latency.Kind), Int(latency.Samples), Nanos(latency.Min), Nanos(latency.P50), Nanos(latency.P90), Nanos(latency.P99),
                Nanos(latency.P999), Nanos(latency.Max), Nanos(latency.Mean),
                Number(daemon.Sum(p => p.CpuPercent)), Number(agents.Sum(p => p.CpuPercent)),
                Number(daemon.Sum(p => p.CpuSeconds)), Number(agents.Sum(p => p.CpuSeconds)), Int(agents.Count),
                Int(stats.Processes.Count == 0 ? 0 : stats.Processes.Max(p => p.PeakRssBytes)),
                env.CpuModel, Int(env.LogicalCores), env.Kernel, env.DotnetVersion, env.Os, env.Hostname,
                Nanos(env.CoreToCoreRoundTrip), env.CoreToCoreCores,
                Int(record.Series.Count),
                stats.HasNoisePercent ? Number(stats.NoisePercent) : string.Empty,
                stats.HasWarmupNoisePercent ? Number(stats.WarmupNoisePercent) : string.Empty,
                stats.HasLoadAverage1M ? Number(stats.LoadAverage1M) : string.Empty,
                lag is null ? string.Empty : Int(lag.Samples), Nanos(lag?.P50), Nanos(lag?.P99), Nanos(lag?.Max),
                lag is null ? string.Empty : Bool(lag.Dominates),
                placement?.PublisherCpus ?? string.Empty, placement?.SubscriberCpus ?? string.Empty, placement?.SmtSiblings ?? string.Empty,
                placement is { HasSamePhysicalCore: true } ? Bool(placement.SamePhysicalCore) : string.Empty,
                placement is null ? string.Empty : string.Join(';', placement.SharedCaches), placement?.NumaNodes ?? string.Empty,
                placement?.CpufreqDriver ?? string.Empty, placement?.CpufreqGovernor ?? string.Empty, placement?.IsolatedCpus ?? string.Empty,
                placement?.NohzFullCpus ?? string.Empty, placement?.KernelParameters ?? string.Empty, placement?.CgroupCpuQuota ?? string.Empty,
                placement?.TransparentHugePages ?? string.Empty, placement?.Smt ?? string.Empty,
            ]);
        }

        return csv.ToString();
    }

    public static string SeriesCsv(IReadOnlyList<ScenarioResult> results)
    {
        var records = results.Select(ScenarioProtos.ToProto);
        var csv = new StringBuilder();
        Row(csv, SeriesHeader);
        foreach (var record in records)
        {
            foreach (var point in record.Series)
            {
                var latency = point.Latency ?? new LatencyStats();
                Row(csv,
                [
                    record.Scenario?.Id ?? string.Empty, Seconds(point.Elapsed), Number(point.MessagesPerSecond), Number(point.BytesPerSecond),
                    EnumName(latency.Kind), Int(latency.Samples), Nanos(latency.Min), Nanos(latency.P50), Nanos(latency.P90), Nanos(latency.P99),
                    Nanos(latency.P999), Nanos(latency.Max), Nanos(latency.Mean),
                    Number(point.DaemonCpuPercent), Number(point.AgentsCpuPercent),
                ]);
            }
        }

        return csv.ToString();
    }

    /// <summary>RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; CRLF between records.</summary>
    private static void Row(StringBuilder csv, IReadOnlyList<string> fields)
    {
        for (int i = 0; i < fields.Count; i++)
        {
            if (i > 0)
            {
                csv.Append(',');
            }

            var field = fields[i];
            if (field.AsSpan().IndexOfAny(",\"\r\n") >= 0)
            {
                csv.Append('"').Append(field.Replace("\"", "\"\"", StringComparison.Ordinal)).Append('"');
            }
            else
            {
                csv.Append(field);
            }
        }

        csv.Append("\r\n");
    }

    private static string EnumName<T>(T value)
        where T : struct, System.Enum =>
        ControlReflection.Descriptor.EnumTypes.FirstOrDefault(e => e.ClrType == typeof(T))?.FindValueByNumber(Convert.ToInt32(value, CultureInfo.InvariantCulture))?.Name
        ?? Convert.ToInt32(value, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture);

    private static string Time(Timestamp? time) =>
        time is null ? string.Empty : time.ToDateTime().ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", CultureInfo.InvariantCulture);

    private static string Seconds(Duration? duration) =>
        duration is null ? string.Empty : Number(ScenarioProtos.ToNanoseconds(duration) / 1e9);

    private static string Nanos(Duration? duration) =>
        duration is null ? string.Empty : ScenarioProtos.ToNanoseconds(duration).ToString(CultureInfo.InvariantCulture);

    private static string Bool(bool value) => value ? "true" : "false";

    private static string Int(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Int(ulong value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Number(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
