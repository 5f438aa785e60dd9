using IpcBench.Daemon.Model;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// The `soak_points` table (schema version 5): one row per point and measure. Scenario-wide measures (delivered msg/s,
/// latency percentiles) have role '' and index 0; a process's resources its role and index. Rows, not a blob, so a
/// page of hours reads one measure without decoding the rest.
/// </summary>
internal static class SoakPoints
{
    public const string Table = """
        CREATE TABLE soak_points (
            scenario_id TEXT NOT NULL,
            at_ms INTEGER NOT NULL,
            role TEXT NOT NULL,
            process_index INTEGER NOT NULL,
            measure TEXT NOT NULL,
            value REAL NOT NULL,
            PRIMARY KEY (scenario_id, at_ms, role, process_index, measure)
        ) WITHOUT ROWID;
        """;

    private const string Delivered = "delivered_per_second";
    private const string P50 = "p50_ns";
    private const string P99 = "p99_ns";
    private const string P999 = "p999_ns";

    public static IReadOnlyList<SoakPoint> Read(SqliteConnection connection, string id)
    {
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT at_ms, role, process_index, measure, value FROM soak_points WHERE scenario_id = $id ORDER BY at_ms;";
        command.Parameters.AddWithValue("$id", id);
        var points = new List<SoakPoint>();
        using var reader = command.ExecuteReader();
        long at = long.MinValue;
        double delivered = 0;
        long? p50 = null, p99 = null, p999 = null;
        var processes = new List<SoakProcessValue>();
        while (reader.Read())
        {
            long rowAt = reader.GetInt64(0);
            if (rowAt != at && at != long.MinValue)
            {
                points.Add(new SoakPoint(TimeSpan.FromMilliseconds(at), delivered, p50, p99, p999, processes));
                (delivered, p50, p99, p999, processes) = (0, null, null, null, []);
            }

            at = rowAt;
            string role = reader.GetString(1);
            string measure = reader.GetString(3);
            double value = reader.GetDouble(4);
            if (role.Length > 0)
            {
                if (Enum.TryParse<ProcessResource>(measure, out var resource))
                {
                    processes.Add(new SoakProcessValue(role, reader.GetInt32(2), resource, value));
                }

                continue;
            }

            switch (measure)
            {
                case Delivered: delivered = value; break;
                case P50: p50 = (long)value; break;
                case P99: p99 = (long)value; break;
                case P999: p999 = (long)value; break;
            }
        }

        if (at != long.MinValue)
        {
            points.Add(new SoakPoint(TimeSpan.FromMilliseconds(at), delivered, p50, p99, p999, processes));
        }

        return points;
    }

    /// <summary>Inserts the points of one write batch inside its transaction.</summary>
    public sealed class Writer : IDisposable
    {
        private readonly SqliteCommand _insert;
        private readonly SqliteParameter _id, _at, _role, _index, _measure, _value;

        public Writer(SqliteConnection connection, SqliteTransaction transaction)
        {
            _insert = connection.CreateCommand();
            _insert.Transaction = transaction;
            _insert.CommandText = """
                INSERT OR REPLACE INTO soak_points (scenario_id, at_ms, role, process_index, measure, value)
                VALUES ($id, $at, $role, $index, $measure, $value);
                """;
            _id = _insert.Parameters.Add("$id", SqliteType.Text);
            _at = _insert.Parameters.Add("$at", SqliteType.Integer);
            _role = _insert.Parameters.Add("$role", SqliteType.Text);
            _index = _insert.Parameters.Add("$index", SqliteType.Integer);
            _measure = _insert.Parameters.Add("$measure", SqliteType.Text);
            _value = _insert.Parameters.Add("$value", SqliteType.Real);
        }

        public void Add(string scenarioId, SoakPoint point)
        {
            long at = (long)point.At.TotalMilliseconds;
            Insert(scenarioId, at, string.Empty, 0, Delivered, point.DeliveredPerSecond);
            foreach (var (measure, value) in new[] { (P50, point.P50Ns), (P99, point.P99Ns), (P999, point.P999Ns) })
            {
                if (value is { } v)
                {
                    Insert(scenarioId, at, string.Empty, 0, measure, v);
                }
            }

            foreach (var process in point.Processes)
            {
                Insert(scenarioId, at, process.Role, process.Index, process.Resource.ToString(), process.Value);
            }
        }

        private void Insert(string scenarioId, long at, string role, int index, string measure, double value)
        {
            (_id.Value, _at.Value, _role.Value, _index.Value, _measure.Value, _value.Value) = (scenarioId, at, role, index, measure, value);
            _insert.ExecuteNonQuery();
        }

        public void Dispose() => _insert.Dispose();
    }
}
