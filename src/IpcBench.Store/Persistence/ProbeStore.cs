using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// The core-to-core probes of the `core_probes` table (schema version 4), per machine identity: the history the daemon
/// learns its placement classes from, kept across restarts because a fresh daemon would otherwise start knowing nothing.
/// </summary>
/// <param name="store">The database file, whose connections (busy timeout included) this table shares.</param>
public sealed class ProbeStore(ScenarioStore store)
{
    public void Add(string machine, DateTime takenAt, string cores, double roundTripNs, string scenarioId)
    {
        using var connection = store.Open();
        using var command = connection.CreateCommand();
        command.CommandText = """
            INSERT INTO core_probes (machine, taken_at_us, cores, round_trip_ns, scenario_id) VALUES ($machine, $taken, $cores, $ns, $scenario);
            """;
        command.Parameters.AddWithValue("$machine", machine);
        command.Parameters.AddWithValue("$taken", ScenarioStore.ToMicros(takenAt));
        command.Parameters.AddWithValue("$cores", cores);
        command.Parameters.AddWithValue("$ns", roundTripNs);
        command.Parameters.AddWithValue("$scenario", scenarioId);
        command.ExecuteNonQuery();
    }

    /// <summary>The machine's latest <paramref name="limit"/> probes in ns, oldest first.</summary>
    public IReadOnlyList<double> Latest(string machine, int limit)
    {
        using var connection = store.Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT round_trip_ns FROM core_probes WHERE machine = $machine ORDER BY taken_at_us DESC LIMIT $limit;";
        command.Parameters.AddWithValue("$machine", machine);
        command.Parameters.AddWithValue("$limit", limit);
        var probes = new List<double>();
        using var reader = command.ExecuteReader();
        while (reader.Read())
        {
            probes.Add(reader.GetDouble(0));
        }

        probes.Reverse();
        return probes;
    }
}
