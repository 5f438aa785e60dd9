using System.Globalization;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// The scenarios and their per-second series in one SQLite file. Each scenario is kept as control.proto's Scenario
/// message in protobuf bytes (<see cref="ScenarioProtos.ToStoredBytes"/>, so new fields need no migration) beside the columns filters and retention use.
/// Synchronous, one connection per call (Microsoft.Data.Sqlite pools them): the daemon writes from one background
/// thread (<see cref="StoreWriter"/>) and reads from control calls, which WAL lets run side by side.
/// </summary>
public sealed class ScenarioStore
{
    /// <summary>PRAGMA user_version this code writes; older files are migrated step by step in <see cref="StoreSchema.Migrate"/>.</summary>
    public const int SchemaVersion = StoreSchema.Version;

    private readonly string _connectionString;

    public ScenarioStore(string path, TimeSpan? busyTimeout = null)
    {
        Path = path;
        BusyTimeout = busyTimeout ?? TimeSpan.FromSeconds(5);
        _connectionString = new SqliteConnectionStringBuilder
        {
            DataSource = path,
            Mode = SqliteOpenMode.ReadWriteCreate,
            Cache = SqliteCacheMode.Private,
            Pooling = true,
            // Microsoft.Data.Sqlite retries a busy or locked statement itself until the command timeout (30 s by
            // default, whole seconds, 0 = forever), on top of PRAGMA busy_timeout: without this a locked file held
            // a write for 30 s whatever BusyTimeout said.
            DefaultTimeout = Math.Max(1, (int)Math.Ceiling(BusyTimeout.TotalSeconds)),
        }.ToString();
    }

    public string Path { get; }

    /// <summary>How long a call waits for another connection's lock (another daemon or `run` on the same file).</summary>
    public TimeSpan BusyTimeout { get; }

    /// <summary>Creates the directory (0700: results may name hosts and CPUs), the file and the schema, and upgrades an older schema.</summary>
    public void Initialize()
    {
        var directory = System.IO.Path.GetDirectoryName(System.IO.Path.GetFullPath(Path));
        if (!string.IsNullOrEmpty(directory) && !Directory.Exists(directory))
        {
            Directory.CreateDirectory(directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }

        using var connection = Open();
        // WAL: readers (control calls) never wait for the writer, and a write is one fsync of the log.
        StoreSchema.Execute(connection, "PRAGMA journal_mode=WAL;");
        StoreSchema.Execute(connection, "PRAGMA synchronous=NORMAL;");
        StoreSchema.Migrate(connection);
    }

    /// <summary>Writes a batch in one transaction: all of it, or (on an exception) none of it.</summary>
    public void Write(IReadOnlyList<StoreWrite> writes, string owner)
    {
        using var connection = Open();
        using var transaction = connection.BeginTransaction();
        using var upsert = connection.CreateCommand();
        upsert.Transaction = transaction;
        upsert.CommandText = """
            INSERT INTO scenarios (id, created_at_us, transport, state, finished, owner, updated_at_us, scenario, suite_id)
            VALUES ($id, $created, $transport, $state, $finished, $owner, $updated, $scenario, $suite)
            ON CONFLICT (id) DO UPDATE SET state = excluded.state, finished = excluded.finished, owner = excluded.owner,
                updated_at_us = excluded.updated_at_us, scenario = excluded.scenario;
            """;
        var id = upsert.Parameters.Add("$id", SqliteType.Text);
        var created = upsert.Parameters.Add("$created", SqliteType.Integer);
        var transport = upsert.Parameters.Add("$transport", SqliteType.Text);
        var state = upsert.Parameters.Add("$state", SqliteType.Integer);
        var finished = upsert.Parameters.Add("$finished", SqliteType.Integer);
        upsert.Parameters.AddWithValue("$owner", owner);
        var updated = upsert.Parameters.Add("$updated", SqliteType.Integer);
        var blob = upsert.Parameters.Add("$scenario", SqliteType.Blob);
        var suite = upsert.Parameters.Add("$suite", SqliteType.Text);

        using var point = connection.CreateCommand();
        point.Transaction = transaction;
        point.CommandText = """
            INSERT OR REPLACE INTO series (scenario_id, elapsed_ns, messages_per_second, bytes_per_second, latency_kind, samples,
                min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns, mean_ns, daemon_cpu_percent, agents_cpu_percent)
            VALUES ($id, $elapsed, $mps, $bps, $kind, $samples, $min, $p50, $p90, $p99, $p999, $max, $mean, $daemon_cpu, $agents_cpu);
            """;
        var pointParameters = new[] { "$id", "$elapsed", "$mps", "$bps", "$kind", "$samples", "$min", "$p50", "$p90", "$p99", "$p999", "$max", "$mean", "$daemon_cpu", "$agents_cpu" }
            .Select(name => point.Parameters.Add(name, name is "$mps" or "$bps" or "$daemon_cpu" or "$agents_cpu" ? SqliteType.Real
                : name == "$id" ? SqliteType.Text : SqliteType.Integer))
            .ToArray();

        using var latencyInterval = connection.CreateCommand();
        latencyInterval.Transaction = transaction;
        latencyInterval.CommandText = """
            INSERT OR REPLACE INTO latency_intervals (scenario_id, interval_index, start_ms, end_ms, histogram) VALUES ($id, $index, $start, $end, $histogram);
            """;
        var latencyParameters = new[] { ("$id", SqliteType.Text), ("$index", SqliteType.Integer), ("$start", SqliteType.Integer), ("$end", SqliteType.Integer), ("$histogram", SqliteType.Blob) }
            .Select(p => latencyInterval.Parameters.Add(p.Item1, p.Item2))
            .ToArray();

        using var soakPoints = new SoakPoints.Writer(connection, transaction);
        long now = ToMicros(DateTime.UtcNow);
        foreach (var write in writes)
        {
            if (write.Soak is { } soak)
            {
                soakPoints.Add(write.ScenarioId, soak);
            }

            if (write.Latency is { } hdr)
            {
                object[] values = [write.ScenarioId, hdr.Index, hdr.StartMs, hdr.EndMs, hdr.Histogram];
                for (int i = 0; i < values.Length; i++)
                {
                    latencyParameters[i].Value = values[i];
                }

                latencyInterval.ExecuteNonQuery();
            }

            if (write.Scenario is { } scenario)
            {
                id.Value = scenario.Id;
                created.Value = ToMicros(scenario.CreatedAt);
                transport.Value = scenario.Spec?.Transport ?? string.Empty;
                state.Value = ScenarioProtos.StoredState(scenario.State);
                finished.Value = scenario.IsFinished ? 1 : 0;
                updated.Value = now;
                blob.Value = ScenarioProtos.ToStoredBytes(scenario);
                suite.Value = scenario.SuiteId;
                upsert.ExecuteNonQuery();
            }

            if (write.Point is { } interval)
            {
                var latency = interval.Latency ?? NoLatency;
                object[] values =
                [
                    write.ScenarioId, interval.Elapsed.Ticks * 100, interval.MessagesPerSecond, interval.BytesPerSecond, (int)latency.Kind, latency.Samples,
                    latency.MinNs ?? 0, latency.P50Ns ?? 0, latency.P90Ns ?? 0, latency.P99Ns ?? 0, latency.P999Ns ?? 0, latency.MaxNs ?? 0, latency.MeanNs ?? 0,
                    interval.DaemonCpuPercent, interval.AgentsCpuPercent,
                ];
                for (int i = 0; i < values.Length; i++)
                {
                    pointParameters[i].Value = values[i];
                }

                point.ExecuteNonQuery();
            }
        }

        transaction.Commit();
    }

    public ScenarioSnapshot? Get(string id)
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT scenario FROM scenarios WHERE id = $id;";
        command.Parameters.AddWithValue("$id", id);
        return command.ExecuteScalar() is byte[] bytes ? ScenarioProtos.FromStoredBytes(bytes) : null;
    }

    /// <summary>
    /// Up to <paramref name="limit"/> scenarios matching <paramref name="filter"/>, newest first (created_at, then id
    /// descending), strictly after <paramref name="after"/> in that order when given.
    /// </summary>
    public IReadOnlyList<ScenarioSnapshot> Query(ScenarioFilter filter, ScenarioKey? after, int limit)
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        var where = new List<string>();
        if (filter.Transport is { } transport)
        {
            where.Add("transport = $transport");
            command.Parameters.AddWithValue("$transport", transport);
        }

        if (filter.State is { } state)
        {
            where.Add("state = $state");
            command.Parameters.AddWithValue("$state", ScenarioProtos.StoredState(state));
        }

        if (filter.SuiteId is { } suiteId)
        {
            where.Add("suite_id = $suite_id");
            command.Parameters.AddWithValue("$suite_id", suiteId);
        }

        if (filter.CreatedAfter is { } from)
        {
            where.Add("created_at_us >= $from");
            command.Parameters.AddWithValue("$from", ToMicros(from));
        }

        if (filter.CreatedBefore is { } to)
        {
            where.Add("created_at_us < $to");
            command.Parameters.AddWithValue("$to", ToMicros(to));
        }

        if (after is { } key)
        {
            where.Add("(created_at_us < $after_created OR (created_at_us = $after_created AND id < $after_id))");
            command.Parameters.AddWithValue("$after_created", key.CreatedAtMicros);
            command.Parameters.AddWithValue("$after_id", key.Id);
        }

        command.CommandText = "SELECT scenario FROM scenarios"
            + (where.Count > 0 ? " WHERE " + string.Join(" AND ", where) : string.Empty)
            + " ORDER BY created_at_us DESC, id DESC LIMIT $limit;";
        command.Parameters.AddWithValue("$limit", limit);
        var scenarios = new List<ScenarioSnapshot>();
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            scenarios.Add(ScenarioProtos.FromStoredBytes((byte[])reader[0]));
        }

        return scenarios;
    }

    /// <summary>A scenario's per-tick series, oldest first.</summary>
    public IReadOnlyList<IntervalSample> Series(string id)
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        command.CommandText = """
            SELECT elapsed_ns, messages_per_second, bytes_per_second, latency_kind, samples, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns, mean_ns,
                daemon_cpu_percent, agents_cpu_percent
            FROM series WHERE scenario_id = $id ORDER BY elapsed_ns;
            """;
        command.Parameters.AddWithValue("$id", id);
        var series = new List<IntervalSample>();
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            var latency = new LatencySummary(
                (RunLatencyKind)reader.GetInt32(3), reader.GetInt64(4), reader.GetInt64(5), reader.GetInt64(6), reader.GetInt64(7),
                reader.GetInt64(8), reader.GetInt64(9), reader.GetInt64(10), reader.GetInt64(11));
            series.Add(new IntervalSample(
                TimeSpan.FromTicks(reader.GetInt64(0) / 100), reader.GetDouble(1), reader.GetDouble(2), latency, reader.GetDouble(12), reader.GetDouble(13)));
        }

        return series;
    }

    /// <summary>A scenario's per-second latency histograms (HdrHistogram compressed), oldest first; none for scenarios stored before schema 2.</summary>
    public IReadOnlyList<HdrInterval> LatencyIntervals(string id)
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT interval_index, start_ms, end_ms, histogram FROM latency_intervals WHERE scenario_id = $id ORDER BY interval_index;";
        command.Parameters.AddWithValue("$id", id);
        var intervals = new List<HdrInterval>();
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            intervals.Add(new HdrInterval(reader.GetInt32(0), reader.GetInt64(1), reader.GetInt64(2), (byte[])reader[3]));
        }

        return intervals;
    }

    /// <summary>A scenario's soak points, oldest first (none for scenarios stored before schema 5 or shorter than a point).</summary>
    public IReadOnlyList<SoakPoint> SoakPoints(string id)
    {
        using var connection = Open();
        return Persistence.SoakPoints.Read(connection, id);
    }

    /// <summary>
    /// Scenarios left unfinished by an owner that is gone (a daemon that was killed or lost power): FAILED, "daemon
    /// restarted", ended now. Rows of a live owner (a daemon or `run` sharing this file) are left alone.
    /// </summary>
    public IReadOnlyList<string> FailOrphans(Func<string, bool> ownerAlive, DateTime now)
    {
        using var connection = Open();
        using var transaction = connection.BeginTransaction();
        var orphans = new List<(string Id, string Owner, byte[] Bytes)>();
        using (var select = connection.CreateCommand())
        {
            select.Transaction = transaction;
            select.CommandText = "SELECT id, owner, scenario FROM scenarios WHERE finished = 0;";
            using var reader = select.ExecuteReader();
            while (reader.Read())
            {
                orphans.Add((reader.GetString(0), reader.GetString(1), (byte[])reader[2]));
            }
        }

        var failed = new List<string>();
        using var update = connection.CreateCommand();
        update.Transaction = transaction;
        update.CommandText = "UPDATE scenarios SET state = $state, finished = 1, updated_at_us = $now, scenario = $scenario WHERE id = $id;";
        foreach (var (id, owner, bytes) in orphans)
        {
            if (ownerAlive(owner))
            {
                continue;
            }

            var scenario = ScenarioProtos.FromStoredBytes(bytes) with { State = RunState.Failed, Error = DaemonRestartedError, EndedAt = now };
            update.Parameters.Clear();
            update.Parameters.AddWithValue("$state", ScenarioProtos.StoredState(RunState.Failed));
            update.Parameters.AddWithValue("$now", ToMicros(now));
            update.Parameters.AddWithValue("$scenario", ScenarioProtos.ToStoredBytes(scenario));
            update.Parameters.AddWithValue("$id", id);
            update.ExecuteNonQuery();
            failed.Add(id);
        }

        transaction.Commit();
        return failed;
    }

    public const string DaemonRestartedError = "daemon restarted";

    /// <summary>
    /// Deletes finished scenarios (and their series), oldest first, until at most <paramref name="maxScenarios"/>
    /// remain, and those created before <paramref name="olderThan"/>. Unfinished ones are never deleted. Returns the ids.
    /// </summary>
    public IReadOnlyList<string> Trim(int maxScenarios, DateTime? olderThan)
    {
        using var connection = Open();
        using var transaction = connection.BeginTransaction();
        var doomed = new List<string>();
        using (var select = connection.CreateCommand())
        {
            select.Transaction = transaction;
            select.CommandText = """
                SELECT id FROM scenarios WHERE finished = 1 AND created_at_us < $cutoff
                UNION
                SELECT id FROM (SELECT id FROM scenarios WHERE finished = 1 ORDER BY created_at_us ASC, id ASC
                                LIMIT max(0, (SELECT count(*) FROM scenarios) - $max));
                """;
            select.Parameters.AddWithValue("$cutoff", olderThan is { } cutoff ? ToMicros(cutoff) : long.MinValue);
            select.Parameters.AddWithValue("$max", maxScenarios);
            using var reader = select.ExecuteReader();
            while (reader.Read())
            {
                doomed.Add(reader.GetString(0));
            }
        }

        using var delete = connection.CreateCommand();
        delete.Transaction = transaction;
        delete.CommandText = "DELETE FROM series WHERE scenario_id = $id; DELETE FROM latency_intervals WHERE scenario_id = $id; "
            + "DELETE FROM soak_points WHERE scenario_id = $id; DELETE FROM scenarios WHERE id = $id;";
        var id = delete.Parameters.Add("$id", SqliteType.Text);
        foreach (var doomedId in doomed)
        {
            id.Value = doomedId;
            delete.ExecuteNonQuery();
        }

        transaction.Commit();
        return doomed;
    }

    public long Count()
    {
        using var connection = Open();
        return (long)StoreSchema.Scalar(connection, "SELECT count(*) FROM scenarios;")!;
    }

    public static long ToMicros(DateTime time) => (time.ToUniversalTime() - DateTime.UnixEpoch).Ticks / 10;

    /// <summary>What a series row without latency stores: zeros, as it always has.</summary>
    private static readonly LatencySummary NoLatency = new(RunLatencyKind.Unspecified, 0, 0, 0, 0, 0, 0, 0, 0);

    /// <summary>A connection to the file, for this table and the others kept in it (SuiteStore, ProbeStore).</summary>
    internal SqliteConnection Open()
    {
        var connection = new SqliteConnection(_connectionString);
        try
        {
            connection.Open();
            // Per connection: another process (a second daemon, `run`) may hold the write lock for a moment.
            StoreSchema.Execute(connection, string.Create(CultureInfo.InvariantCulture, $"PRAGMA busy_timeout = {(int)BusyTimeout.TotalMilliseconds};"));
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }
}
