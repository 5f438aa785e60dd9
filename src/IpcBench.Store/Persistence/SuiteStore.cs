using System.Text.Json;
using IpcBench.Daemon.Model;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// Suites in the scenario database's `suites` table (schema version 3): the engine's SuiteSnapshot as JSON beside the
/// columns listing and start-up housekeeping use. A suite holds only its cells' specs and scenario ids; the results
/// are the scenarios' own rows, so a suite row stays small and is rewritten once per finished scenario.
/// </summary>
/// <param name="store">The database file, whose connections (busy timeout included) this table shares.</param>
public sealed class SuiteStore(ScenarioStore store)
{
    private static readonly JsonSerializerOptions Json = new() { WriteIndented = false };

    public void Write(SuiteSnapshot suite, string owner)
    {
        using var connection = store.Open();
        using var command = connection.CreateCommand();
        command.CommandText = """
            INSERT INTO suites (id, created_at_us, state, finished, owner, suite) VALUES ($id, $created, $state, $finished, $owner, $suite)
            ON CONFLICT (id) DO UPDATE SET state = excluded.state, finished = excluded.finished, owner = excluded.owner, suite = excluded.suite;
            """;
        command.Parameters.AddWithValue("$id", suite.Id);
        command.Parameters.AddWithValue("$created", ScenarioStore.ToMicros(suite.CreatedAt));
        command.Parameters.AddWithValue("$state", (int)suite.State);
        command.Parameters.AddWithValue("$finished", suite.IsFinished ? 1 : 0);
        command.Parameters.AddWithValue("$owner", owner);
        command.Parameters.AddWithValue("$suite", JsonSerializer.Serialize(Stored(suite), Json));
        command.ExecuteNonQuery();
    }

    public SuiteSnapshot? Get(string id)
    {
        using var connection = store.Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT suite FROM suites WHERE id = $id;";
        command.Parameters.AddWithValue("$id", id);
        return command.ExecuteScalar() is string json ? Read(json) : null;
    }

    /// <summary>Every stored suite, newest first (suites are few: each is a batch of scenarios).</summary>
    public IReadOnlyList<SuiteSnapshot> All()
    {
        using var connection = store.Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT suite FROM suites ORDER BY created_at_us DESC, id DESC;";
        var suites = new List<SuiteSnapshot>();
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            suites.Add(Read(reader.GetString(0)));
        }

        return suites;
    }

    /// <summary>Suites left unfinished by an owner that is gone: FAILED "daemon restarted", keeping the cells they finished.</summary>
    public IReadOnlyList<string> FailOrphans(Func<string, bool> ownerAlive, DateTime now)
    {
        var orphans = new List<(SuiteSnapshot Suite, string Owner)>();
        using (var connection = store.Open())
        using (var select = connection.CreateCommand())
        {
            select.CommandText = "SELECT suite, owner FROM suites WHERE finished = 0;";
            using var reader = select.ExecuteReader();
            while (reader.Read())
            {
                orphans.Add((Read(reader.GetString(0)), reader.GetString(1)));
            }
        }

        var failed = new List<string>();
        foreach (var (suite, owner) in orphans.Where(o => !ownerAlive(o.Owner)))
        {
            // The scenario that was running is FAILED too (ScenarioStore.FailOrphans) and stays among the cell's ids.
            Write(suite with { State = SuiteRunState.Failed, Error = ScenarioStore.DaemonRestartedError, EndedAt = now }, owner);
            failed.Add(suite.Id);
        }

        return failed;
    }

    /// <summary>What a row keeps: the running cell is a moment's fact, not the suite's.</summary>
    private static SuiteSnapshot Stored(SuiteSnapshot suite) => suite with { RunningRound = null, RunningCell = null, RunningScenarioId = null };

    private static SuiteSnapshot Read(string json) =>
        JsonSerializer.Deserialize<SuiteSnapshot>(json, Json) ?? throw new InvalidOperationException("a suite row holds no suite");
}
