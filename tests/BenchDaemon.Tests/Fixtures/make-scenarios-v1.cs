#:project ../../../src/BenchDaemon/BenchDaemon.csproj
#:property GenerateProgramFile=false
#:property IsTestProject=false
// Writes scenarios-v1.db with the daemon's ScenarioStore as built from this checkout, then reads it back and writes
// what an export of it holds (scenarios-v1.json, scenarios-v1.csv, scenarios-v1-series.csv). Run from this directory:
//   dotnet run make-scenarios-v1.cs
// The committed files were made at commit e982187 (Microsoft.Data.Sqlite.Core 6.0.0 + SQLitePCLRaw 2.0.6), so that
// StoredDatabaseFixtureTests proves a later SQLite stack reads a database an earlier daemon wrote.
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Persistence;
using IpcBench.V1;
using Microsoft.Data.Sqlite;

[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

var t0 = new DateTime(2025, 6, 1, 9, 30, 0, DateTimeKind.Utc);
var exportedAt = new DateTime(2025, 6, 2, 0, 0, 0, DateTimeKind.Utc);
const string Database = "scenarios-v1.db";
foreach (var leftover in new[] { Database, Database + "-wal", Database + "-shm" })
{
    File.Delete(leftover);
}

var store = new ScenarioStore(Database);
store.Initialize();

var completed = Finished("fx-completed", "uds", t0, ScenarioState.Completed, LatencyKind.OneWay);
var failed = Finished("fx-failed", "tcp", t0.AddMinutes(1), ScenarioState.Failed, LatencyKind.OneWay);
failed.Error = "agent 1 (pid 4711) exited with code 134";
failed.StorageError = "the scenario database is locked";
var stopped = Finished("fx-stopped", "shm-ring", t0.AddMinutes(2), ScenarioState.Stopped, LatencyKind.RoundTrip);
stopped.Spec.Mode = Mode.RoundTrip;
stopped.Spec.WaitStrategy = WaitStrategy.Spin;
stopped.Spec.Name = "a name, with \"quotes\"";

// Two scenarios whose daemon died: one marked by a restart here, one left RUNNING for the reading code to mark.
store.Write(
[
    new StoreWrite(completed.Id, Running(completed.Id, "uds", t0), null),
    .. Enumerable.Range(1, 3).Select(s => new StoreWrite(completed.Id, null, Point(s, LatencyKind.OneWay))),
    new StoreWrite(completed.Id, completed, null),
    new StoreWrite(failed.Id, failed, Point(1, LatencyKind.OneWay)),
    new StoreWrite(failed.Id, null, Point(2, LatencyKind.OneWay)),
    new StoreWrite(stopped.Id, stopped, Point(1, LatencyKind.RoundTrip)),
], "4242:100");
store.Write([new StoreWrite("fx-restarted", Running("fx-restarted", "iceoryx2", t0.AddMinutes(3)), Point(1, LatencyKind.OneWay))], "4343:200");
store.FailOrphans(owner => owner != "4343:200", t0.AddMinutes(10));
store.Write([new StoreWrite("fx-orphan", Running("fx-orphan", "channels", t0.AddMinutes(4)), Point(1, LatencyKind.OneWay))], "4444:300");

// One file, no -wal or -shm beside it, as a cleanly stopped daemon leaves it (still in WAL mode): the last connection
// to close checkpoints the log into the file and deletes both.
SqliteConnection.ClearAllPools();
using (var connection = new SqliteConnection($"Data Source={Database};Pooling=False"))
{
    connection.Open();
    using var compact = connection.CreateCommand();
    compact.CommandText = "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;";
    compact.ExecuteNonQuery();
}

var records = store.Query(ScenarioFilter.None, null, 100)
    .Select(s =>
    {
        var record = new ScenarioRecord { Scenario = s };
        record.Series.AddRange(store.Series(s.Id));
        return record;
    })
    .ToList();
SqliteConnection.ClearAllPools();
if (File.Exists(Database + "-wal") || File.Exists(Database + "-shm"))
{
    throw new InvalidOperationException("the write-ahead log was left beside the database");
}

File.WriteAllText("scenarios-v1.json", ScenarioExporter.Json(records, exportedAt));
File.WriteAllText("scenarios-v1.csv", ScenarioExporter.SummaryCsv(records));
File.WriteAllText("scenarios-v1-series.csv", ScenarioExporter.SeriesCsv(records));
Console.WriteLine($"{records.Count} scenarios, {records.Sum(r => r.Series.Count)} series points");

static Scenario Running(string id, string transport, DateTime created) => new()
{
    Id = id,
    Spec = new ScenarioSpec
    {
        Transport = transport,
        Publishers = 1,
        Subscribers = 2,
        PayloadBytes = 1024,
        Duration = Duration.FromTimeSpan(TimeSpan.FromSeconds(10)),
        Warmup = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(500)),
        Topology = Topology.AllToAll,
        PayloadAccess = PayloadAccess.Full,
        Mode = Mode.Stream,
        WaitStrategy = WaitStrategy.Block,
        Name = "fixture",
    },
    State = ScenarioState.Running,
    CreatedAt = Timestamp.FromDateTime(created),
    StartedAt = Timestamp.FromDateTime(created.AddSeconds(1)),
    Stats = new ScenarioStats { MessagesSent = 10, MessagesReceived = 20, MessagesExpected = 20 },
    LastInterval = Point(1, LatencyKind.OneWay),
};

static Scenario Finished(string id, string transport, DateTime created, ScenarioState state, LatencyKind kind)
{
    var scenario = Running(id, transport, created);
    scenario.State = state;
    scenario.EndedAt = Timestamp.FromDateTime(created.AddSeconds(12));
    scenario.Stats = new ScenarioStats
    {
        MessagesSent = 1_000_003,
        MessagesReceived = 2_000_000,
        MessagesExpected = 2_000_006,
        MessagesLost = 6,
        MessagesCorrupted = 1,
        MessagesDuplicated = 2,
        MessagesPerSecond = 198_765.4321,
        BytesPerSecond = 198_765.4321 * 1024,
        MeasuredMessages = 1_987_654,
        MeasuredDuration = Duration.FromTimeSpan(TimeSpan.FromSeconds(10)),
        Latency = Latency(kind, 1_987_654, 0),
    };
    scenario.Stats.Processes.Add(new ProcessStats { Role = "daemon", Index = -1, Pid = 4242, CpuSeconds = 9.75, CpuPercent = 97.5, PeakRssBytes = 123_456_789 });
    scenario.Stats.Processes.Add(new ProcessStats { Role = "agent", Index = 0, Pid = 4243, CpuSeconds = 8.5, CpuPercent = 85, PeakRssBytes = 45_678_901 });
    scenario.Stats.Processes.Add(new ProcessStats { Role = "agent", Index = 1, Pid = 4244, CpuSeconds = 8.25, CpuPercent = 82.5, PeakRssBytes = 45_600_000 });
    scenario.Environment = new EnvironmentInfo
    {
        LogicalCores = 2,
        CpuModel = "Fixture CPU @ 3.00GHz",
        Kernel = "6.1.0-fixture",
        DotnetVersion = ".NET 10.0.0",
        Os = "Debian GNU/Linux 12",
        Hostname = "fixture-host",
        CoreToCoreRoundTrip = new Duration { Nanos = 87 },
        CoreToCoreCores = "0<->1",
    };
    scenario.LastInterval = Point(10, kind);
    return scenario;
}

static IntervalStats Point(int second, LatencyKind kind) => new()
{
    Elapsed = Duration.FromTimeSpan(TimeSpan.FromSeconds(second)),
    MessagesPerSecond = 190_000 + second * 1000.25,
    BytesPerSecond = (190_000 + second * 1000.25) * 1024,
    Latency = Latency(kind, (ulong)(190_000 + second), second),
    DaemonCpuPercent = 95 + second / 10.0,
    AgentsCpuPercent = 160.5 + second,
};

static LatencyStats Latency(LatencyKind kind, ulong samples, int shift) => new()
{
    Kind = kind,
    Samples = samples,
    Min = new Duration { Nanos = 350 + shift },
    P50 = new Duration { Nanos = 1_800 + shift },
    P90 = new Duration { Nanos = 2_700 + shift },
    P99 = new Duration { Nanos = 9_100 + shift },
    P999 = new Duration { Nanos = 48_000 + shift },
    Max = new Duration { Seconds = 1, Nanos = 2_000_000 + shift },
    Mean = new Duration { Nanos = 2_050 + shift },
};
