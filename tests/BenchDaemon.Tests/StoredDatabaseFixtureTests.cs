using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A database an earlier daemon wrote (Fixtures/scenarios-v1.db, see Fixtures/README.md), opened with this build: a
/// change of SQLite stack or schema code must still answer for the scenarios users already have.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class StoredDatabaseFixtureTests : IDisposable
{
    private static readonly string Fixtures = Path.Combine(RepoLayout.Root, "tests", "BenchDaemon.Tests", "Fixtures");
    private static readonly DateTime T0 = new(2025, 6, 1, 9, 30, 0, DateTimeKind.Utc);
    private static readonly DateTime ExportedAt = new(2025, 6, 2, 0, 0, 0, DateTimeKind.Utc);
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "fixture-" + Guid.NewGuid().ToString("N")[..10]);
    private readonly ProtoStore _store;

    public StoredDatabaseFixtureTests()
    {
        // A copy: opening the store switches the file to WAL and may migrate it, and the fixture must stay as made.
        Directory.CreateDirectory(_directory);
        var path = Path.Combine(_directory, "scenarios.db");
        File.Copy(Path.Combine(Fixtures, "scenarios-v1.db"), path);
        _store = new ProtoStore(new ScenarioStore(path));
        _store.Initialize();
    }

    public void Dispose()
    {
        SqliteConnection.ClearAllPools();
        Directory.Delete(_directory, recursive: true);
    }

    [Fact]
    public void EarlierDatabase_ReadsTheSameScenarios_StatesErrorsAndStats()
    {
        var all = _store.Query(ScenarioFilter.None, null, 100);

        Assert.Equal(["fx-orphan", "fx-restarted", "fx-stopped", "fx-failed", "fx-completed"], all.Select(s => s.Id));
        Assert.Equal(
            [ScenarioState.Running, ScenarioState.Failed, ScenarioState.Stopped, ScenarioState.Failed, ScenarioState.Completed],
            all.Select(s => s.State));

        var failed = _store.Get("fx-failed")!;
        Assert.Equal("agent 1 (pid 4711) exited with code 134", failed.Error);
        Assert.Equal("the scenario database is locked", failed.StorageError);
        var restarted = _store.Get("fx-restarted")!;
        Assert.Equal(ScenarioStore.DaemonRestartedError, restarted.Error);
        Assert.Equal(Timestamp.FromDateTime(T0.AddMinutes(10)), restarted.EndedAt);

        var completed = _store.Get("fx-completed")!;
        Assert.Equal("uds", completed.Spec.Transport);
        Assert.Equal(Timestamp.FromDateTime(T0), completed.CreatedAt);
        Assert.Equal(198_765.4321, completed.Stats.MessagesPerSecond);
        Assert.Equal(6UL, completed.Stats.MessagesLost);
        Assert.Equal(new LatencyStats
        {
            Kind = LatencyKind.OneWay,
            Samples = 1_987_654,
            Min = new Duration { Nanos = 350 },
            P50 = new Duration { Nanos = 1_800 },
            P90 = new Duration { Nanos = 2_700 },
            P99 = new Duration { Nanos = 9_100 },
            P999 = new Duration { Nanos = 48_000 },
            Max = new Duration { Seconds = 1, Nanos = 2_000_000 },
            Mean = new Duration { Nanos = 2_050 },
        }, completed.Stats.Latency);
        Assert.Equal(["daemon", "agent", "agent"], completed.Stats.Processes.Select(p => p.Role));
        Assert.Equal(123_456_789UL, completed.Stats.Processes[0].PeakRssBytes);
        Assert.Equal("Fixture CPU @ 3.00GHz", completed.Environment.CpuModel);
        Assert.Equal(LatencyKind.RoundTrip, _store.Get("fx-stopped")!.Stats.Latency.Kind);
        Assert.Equal("a name, with \"quotes\"", _store.Get("fx-stopped")!.Spec.Name);
    }

    [Fact]
    public void EarlierDatabase_ReadsTheSameSeries_AndItsIndexesStillFilter()
    {
        Assert.Equal([3, 2, 1, 1, 1], new[] { "fx-completed", "fx-failed", "fx-stopped", "fx-restarted", "fx-orphan" }.Select(id => _store.Series(id).Count));
        var second = _store.Series("fx-completed")[1];
        Assert.Equal(Duration.FromTimeSpan(TimeSpan.FromSeconds(2)), second.Elapsed);
        Assert.Equal(192_000.5, second.MessagesPerSecond);
        Assert.Equal(192_000.5 * 1024, second.BytesPerSecond);
        Assert.Equal(new Duration { Nanos = 9_102 }, second.Latency.P99);
        Assert.Equal(190_002UL, second.Latency.Samples);
        Assert.Equal(95.2, second.DaemonCpuPercent);
        Assert.Equal(162.5, second.AgentsCpuPercent);
        Assert.Equal(LatencyKind.RoundTrip, Assert.Single(_store.Series("fx-stopped")).Latency.Kind);

        Assert.Equal(["fx-failed"], Ids(_store.Query(ScenarioFilter.None with { Transport = "tcp" }, null, 10)));
        Assert.Equal(["fx-restarted", "fx-failed"], Ids(_store.Query(ScenarioFilter.None with { State = RunState.Failed }, null, 10)));
        Assert.Equal(["fx-orphan", "fx-restarted"], Ids(_store.Query(ScenarioFilter.None with { CreatedAfter = T0.AddMinutes(3) }, null, 10)));
        Assert.Equal(["fx-stopped", "fx-failed"], Ids(_store.Query(ScenarioFilter.None, ProtoStore.Key(_store.Get("fx-restarted")!), 2)));
    }

    [Fact]
    public void EarlierDatabase_ExportsByteForByteWhatTheEarlierCodeExported()
    {
        var store = _store.Inner;
        var records = store.Query(ScenarioFilter.None, null, 100).Select(s => new ScenarioResult(s, store.Series(s.Id))).ToList();

        Assert.Equal(File.ReadAllText(Path.Combine(Fixtures, "scenarios-v1.json")), ScenarioExporter.Json(records, ExportedAt));
        Assert.Equal(File.ReadAllText(Path.Combine(Fixtures, "scenarios-v1.csv")), ScenarioExporter.SummaryCsv(records));
        Assert.Equal(File.ReadAllText(Path.Combine(Fixtures, "scenarios-v1-series.csv")), ScenarioExporter.SeriesCsv(records));
    }

    [Fact]
    public void EarlierDatabase_TakesNewWrites_AndMarksTheScenarioItsGoneOwnerLeftRunning()
    {
        var now = T0.AddDays(1);

        Assert.Equal(["fx-orphan"], _store.FailOrphans(ProcessIdentity.IsAlive, now));
        var orphan = _store.Get("fx-orphan")!;
        Assert.Equal(ScenarioState.Failed, orphan.State);
        Assert.Equal(ScenarioStore.DaemonRestartedError, orphan.Error);
        Assert.Equal(Timestamp.FromDateTime(now), orphan.EndedAt);

        var added = _store.Get("fx-completed")!.Clone();
        added.Id = "new-1";
        added.CreatedAt = Timestamp.FromDateTime(now);
        _store.Write([new ProtoWrite(added.Id, added, _store.Series("fx-completed")[0])], ProcessIdentity.Current);
        Assert.Equal(added, _store.Get("new-1"));
        Assert.Equal(6, _store.Count());
        Assert.Equal(["fx-completed"], _store.Trim(maxScenarios: 5, olderThan: null));
        Assert.Empty(_store.Series("fx-completed"));
    }

    private static List<string> Ids(IEnumerable<Scenario> scenarios) => [.. scenarios.Select(s => s.Id)];

    /// <summary>A scenario the store has no latency intervals for (one from before schema 2) exports a valid .hlog without intervals, not an error.</summary>
    [Fact]
    public void AScenarioWithoutLatencyIntervals_ExportsAnHlogWithoutIntervals()
    {
        var log = ScenarioExporter.HdrLog([("old", [])]);
        Assert.StartsWith("#[Histogram log format version", log, StringComparison.Ordinal);
        Assert.DoesNotContain("Tag=", log, StringComparison.Ordinal);
    }
}
