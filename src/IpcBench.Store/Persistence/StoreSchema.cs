using System.Globalization;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>The database's tables, created or upgraded in one transaction (PRAGMA user_version is the version), and the two SQL helpers every store uses.</summary>
internal static class StoreSchema
{
    public const int Version = 5;

    public static void Migrate(SqliteConnection connection)
    {
        long version = (long)Scalar(connection, "PRAGMA user_version;")!;
        if (version > Version)
        {
            throw new InvalidOperationException(
                $"the database has schema version {version}, newer than this daemon's {Version}; use a newer daemon or another IpcBench:DatabasePath");
        }

        using var transaction = connection.BeginTransaction();
        if (version < 1)
        {
            Execute(connection, """
                CREATE TABLE scenarios (
                    id TEXT PRIMARY KEY,
                    created_at_us INTEGER NOT NULL,
                    transport TEXT NOT NULL,
                    state INTEGER NOT NULL,
                    finished INTEGER NOT NULL,
                    owner TEXT NOT NULL,
                    updated_at_us INTEGER NOT NULL,
                    scenario BLOB NOT NULL
                );
                CREATE INDEX scenarios_by_created ON scenarios (created_at_us DESC, id DESC);
                CREATE INDEX scenarios_by_transport ON scenarios (transport, created_at_us DESC);
                CREATE INDEX scenarios_by_state ON scenarios (state, created_at_us DESC);
                CREATE INDEX scenarios_unfinished ON scenarios (finished) WHERE finished = 0;
                CREATE TABLE series (
                    scenario_id TEXT NOT NULL,
                    elapsed_ns INTEGER NOT NULL,
                    messages_per_second REAL NOT NULL,
                    bytes_per_second REAL NOT NULL,
                    latency_kind INTEGER NOT NULL,
                    samples INTEGER NOT NULL,
                    min_ns INTEGER NOT NULL,
                    p50_ns INTEGER NOT NULL,
                    p90_ns INTEGER NOT NULL,
                    p99_ns INTEGER NOT NULL,
                    p999_ns INTEGER NOT NULL,
                    max_ns INTEGER NOT NULL,
                    mean_ns INTEGER NOT NULL,
                    daemon_cpu_percent REAL NOT NULL,
                    agents_cpu_percent REAL NOT NULL,
                    PRIMARY KEY (scenario_id, elapsed_ns)
                ) WITHOUT ROWID;
                """, transaction);
        }

        if (version < 2)
        {
            // Version 2: the per-second HdrHistograms behind the .hlog export. Scenarios stored before it have none.
            Execute(connection, """
                CREATE TABLE latency_intervals (
                    scenario_id TEXT NOT NULL,
                    interval_index INTEGER NOT NULL,
                    start_ms INTEGER NOT NULL,
                    end_ms INTEGER NOT NULL,
                    histogram BLOB NOT NULL,
                    PRIMARY KEY (scenario_id, interval_index)
                ) WITHOUT ROWID;
                """, transaction);
        }

        if (version < 3)
        {
            // Version 3: suites (SuiteStore), and each scenario's suite for ListScenarios' suite_id filter.
            Execute(connection, """
                ALTER TABLE scenarios ADD COLUMN suite_id TEXT NOT NULL DEFAULT '';
                CREATE INDEX scenarios_by_suite ON scenarios (suite_id, created_at_us DESC) WHERE suite_id <> '';
                CREATE TABLE suites (
                    id TEXT PRIMARY KEY,
                    created_at_us INTEGER NOT NULL,
                    state INTEGER NOT NULL,
                    finished INTEGER NOT NULL,
                    owner TEXT NOT NULL,
                    suite TEXT NOT NULL
                );
                CREATE INDEX suites_unfinished ON suites (finished) WHERE finished = 0;
                """, transaction);
        }

        if (version < 4)
        {
            // Version 4: every core-to-core probe, per machine, for the placement classes the daemon learns (ProbeStore).
            Execute(connection, """
                CREATE TABLE core_probes (
                    machine TEXT NOT NULL,
                    taken_at_us INTEGER NOT NULL,
                    cores TEXT NOT NULL,
                    round_trip_ns REAL NOT NULL,
                    scenario_id TEXT NOT NULL
                );
                CREATE INDEX core_probes_by_machine ON core_probes (machine, taken_at_us DESC);
                """, transaction);
        }

        if (version < 5)
        {
            // Version 5: every soak point's rate, latency and process resources (SoakPoints), for a soak's page.
            Execute(connection, SoakPoints.Table, transaction);
        }

        Execute(connection, $"PRAGMA user_version = {Version};", transaction);
        transaction.Commit();
    }

    internal static void Execute(SqliteConnection connection, string sql, SqliteTransaction? transaction = null)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }

    internal static object? Scalar(SqliteConnection connection, string sql)
    {
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        return command.ExecuteScalar();
    }
}
