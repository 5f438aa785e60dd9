using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Tests;

/// <summary>A rate-search suite as the store keeps it (its bounds, each cell's probes and answer) and the scenarios_total they make.</summary>
public sealed class RateSearchRecordTests : IDisposable
{
    private static readonly DateTime T0 = new(2026, 11, 26, 0, 0, 0, DateTimeKind.Utc);
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "search-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        SqliteConnection.ClearAllPools();
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    [Fact]
    public void TheStore_KeepsTheSearch_AndTotalsCountMaxStepsUntilACellsSearchEnds()
    {
        var path = Path.Combine(_directory, "scenarios.db");
        var scenarios = new ScenarioStore(path);
        scenarios.Initialize();
        var store = new SuiteStore(scenarios);
        var spec = new RunSpec("channels", 1, 1, 8, TimeSpan.FromSeconds(1), TimeSpan.Zero, 0, RunTopology.AllToAll, RunPayloadAccess.Full, RunMode.Stream, null, "s", null);
        RateProbeRecord[] probes = [new(1000, "p1", true, string.Empty), new(4000, "p2", false, "latency p99 2 ms above the bound 1 ms")];
        var suite = new SuiteSnapshot("s-search", "search", string.Empty, 1, SuiteRunState.Running, string.Empty, T0, T0, null,
            [
                new SuiteCellRecord(spec, ["c0"]) { Probes = probes, Search = new RateSearchOutcome(1000, 4000, true, "max_steps (2) reached") },
                new SuiteCellRecord(spec, ["c1"]) { Probes = [], Search = new RateSearchOutcome(null, null, false, "searching") },
            ], 4, null, null, null)
        {
            RateSearch = new RateSearchSpec(TimeSpan.FromMilliseconds(1), 0.99, 2),
        };

        store.Write(suite, "owner");
        var read = store.Get(suite.Id)!;

        Assert.Equal(suite.RateSearch, read.RateSearch);
        Assert.Equal(probes, read.Cells[0].Probes);
        Assert.Equal(suite.Cells[0].Search, read.Cells[0].Search);
        // The ended cell: its closed-loop round and its 2 probes; the other: 1 + max_steps until it ends.
        Assert.Equal(3 + 3, read.ScenariosTotal);
    }
}
