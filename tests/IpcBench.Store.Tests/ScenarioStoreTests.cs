using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Schema;
using IpcBench.V1;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>The SQLite store and its writer against a temporary file: no daemon, no measuring.</summary>
public sealed class ScenarioStoreTests : IDisposable
{
    private static readonly DateTime T0 = new(2025, 3, 1, 12, 0, 0, DateTimeKind.Utc);
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "store-" + Guid.NewGuid().ToString("N")[..10]);

    public ScenarioStoreTests() => Directory.CreateDirectory(_directory);

    public void Dispose()
    {
        SqliteConnection.ClearAllPools();
        Directory.Delete(_directory, recursive: true);
    }

    private string DatabasePath => Path.Combine(_directory, "state", "scenarios.db");

    private ProtoStore NewStore()
    {
        var store = new ProtoStore(new ScenarioStore(DatabasePath));
        store.Initialize();
        return store;
    }

    [Fact]
    public void Initialize_CreatesThePrivateDirectory_WalMode_AndTheSchemaVersion()
    {
        NewStore();

        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(Path.GetDirectoryName(DatabasePath)!));
        using var connection = new SqliteConnection($"Data Source={DatabasePath}");
        connection.Open();
        Assert.Equal("wal", Scalar(connection, "PRAGMA journal_mode;"));
        Assert.Equal((long)ScenarioStore.SchemaVersion, Scalar(connection, "PRAGMA user_version;"));

        // Opening again is harmless: no second migration, nothing lost.
        NewStore();
    }

    [Fact]
    public void Initialize_RefusesADatabaseOfANewerSchema()
    {
        NewStore();
        using (var connection = new SqliteConnection($"Data Source={DatabasePath}"))
        {
            connection.Open();
            Scalar(connection, $"PRAGMA user_version = {ScenarioStore.SchemaVersion + 1};");
        }

        SqliteConnection.ClearAllPools();
        var error = Assert.Throws<InvalidOperationException>(() => NewStore());
        Assert.Contains("newer than this daemon's", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Write_ThenRead_RoundTripsTheScenarioAndItsSeries()
    {
        var store = NewStore();
        var scenario = Finished("a1", "uds", T0, ScenarioState.Completed);
        var points = Enumerable.Range(1, 3).Select(i => Point(i)).ToList();
        store.Write([new ProtoWrite("a1", Running("a1", "uds", T0), null), .. points.Select(p => new ProtoWrite("a1", null, p)), new ProtoWrite("a1", scenario, null)],
            ProcessIdentity.Current);

        Assert.Equal(scenario, store.Get("a1"));
        Assert.Equal(points, store.Series("a1"));
        Assert.Null(store.Get("nope"));
        Assert.Empty(store.Series("nope"));
    }

    [Fact]
    public void LatencyIntervals_RoundTripInOrder_AndGoWithTheirScenarioOnTrim()
    {
        var store = NewStore();
        var intervals = new[] { Interval(0, 1000, 2000), Interval(1, 2000, 3000), Interval(2, 3000, 3000) };
        store.Write([new ProtoWrite("h1", Finished("h1", "uds", T0, ScenarioState.Completed), null), .. intervals.Reverse().Select(i => new ProtoWrite("h1", null, null, i))],
            ProcessIdentity.Current);

        var read = store.LatencyIntervals("h1");
        Assert.Equal(intervals.Select(i => (i.Index, i.StartMs, i.EndMs)), read.Select(i => (i.Index, i.StartMs, i.EndMs)));
        Assert.Equal(intervals.Select(i => i.Histogram), read.Select(i => i.Histogram));
        Assert.Empty(store.LatencyIntervals("nope"));

        Assert.Equal(["h1"], store.Trim(maxScenarios: 0, olderThan: null));
        Assert.Empty(store.LatencyIntervals("h1"));
    }

    [Fact]
    public void SoakPoints_RoundTripInOrder_WithEveryProcessResource_AndGoWithTheirScenarioOnTrim()
    {
        var store = NewStore();
        SoakPoint Point(int seconds, double rate, long? p99) => new(TimeSpan.FromSeconds(seconds), rate, p99 / 2, p99, p99 * 3,
            [new("daemon", -1, ProcessResource.RssBytes, 1e8 + seconds), new("agent", 0, ProcessResource.Descriptors, 40), new("agent", 1, ProcessResource.Threads, 17)]);
        var points = new[] { Point(5, 1000.5, 80_000), Point(15, 990, null), Point(25, 1010, 95_000) };
        store.Write([new ProtoWrite("s1", Finished("s1", "uds", T0, ScenarioState.Completed), null), .. points.Reverse().Select(p => new ProtoWrite("s1", null, null) { Soak = p })],
            ProcessIdentity.Current);

        var read = store.SoakPoints("s1");
        Assert.Equal(points.Select(p => (p.At, p.DeliveredPerSecond, p.P50Ns, p.P99Ns, p.P999Ns)), read.Select(p => (p.At, p.DeliveredPerSecond, p.P50Ns, p.P99Ns, p.P999Ns)));
        static IEnumerable<(TimeSpan, SoakProcessValue)> Flat(IEnumerable<SoakPoint> all) =>
            all.SelectMany(p => p.Processes.Select(v => (p.At, v))).OrderBy(x => (x.At, x.v.Role, x.v.Index));
        Assert.Equal(Flat(points), Flat(read));
        Assert.Empty(store.SoakPoints("nope"));

        Assert.Equal(["s1"], store.Trim(maxScenarios: 0, olderThan: null));
        Assert.Empty(store.SoakPoints("s1"));
    }

    [Fact]
    public void ADatabaseOfSchema1_IsUpgraded_AndItsScenariosStillRead_WithoutLatencyIntervals()
    {
        // A file as the daemon wrote it before schema 2: the version 1 tables and one finished scenario with its series.
        Directory.CreateDirectory(Path.GetDirectoryName(DatabasePath)!);
        var scenario = Finished("old", "uds", T0, ScenarioState.Completed);
        using (var connection = new SqliteConnection($"Data Source={DatabasePath}"))
        {
            connection.Open();
            Scalar(connection, """
                CREATE TABLE scenarios (id TEXT PRIMARY KEY, created_at_us INTEGER NOT NULL, transport TEXT NOT NULL, state INTEGER NOT NULL,
                    finished INTEGER NOT NULL, owner TEXT NOT NULL, updated_at_us INTEGER NOT NULL, scenario BLOB NOT NULL);
                CREATE TABLE series (scenario_id TEXT NOT NULL, elapsed_ns INTEGER NOT NULL, messages_per_second REAL NOT NULL,
                    bytes_per_second REAL NOT NULL, latency_kind INTEGER NOT NULL, samples INTEGER NOT NULL, min_ns INTEGER NOT NULL,
                    p50_ns INTEGER NOT NULL, p90_ns INTEGER NOT NULL, p99_ns INTEGER NOT NULL, p999_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,
                    mean_ns INTEGER NOT NULL, daemon_cpu_percent REAL NOT NULL, agents_cpu_percent REAL NOT NULL,
                    PRIMARY KEY (scenario_id, elapsed_ns)) WITHOUT ROWID;
                INSERT INTO series VALUES ('old', 1000000000, 1001, 64064, 1, 1001, 100, 1001, 2000, 5000, 7000, 1000000005, 1200, 51, 80.5);
                PRAGMA user_version = 1;
                """);
            using var insert = connection.CreateCommand();
            insert.CommandText = "INSERT INTO scenarios VALUES ('old', 1, 'uds', 3, 1, 'gone:1', 1, $blob);";
            insert.Parameters.AddWithValue("$blob", Google.Protobuf.MessageExtensions.ToByteArray(scenario));
            insert.ExecuteNonQuery();
        }

        SqliteConnection.ClearAllPools();
        var store = NewStore();

        Assert.Equal(scenario, store.Get("old"));
        Assert.Equal([Point(1)], store.Series("old"));
        // None: its .hlog export is then a log without intervals (StoredDatabaseFixtureTests), not an error.
        Assert.Empty(store.LatencyIntervals("old"));
    }

    [Fact]
    public void Query_PagesNewestFirst_AndFiltersByTransportStateAndTime()
    {
        var store = NewStore();
        // Two share a creation time: the id breaks the tie, so paging never skips or repeats one.
        var all = new[]
        {
            Finished("s0", "uds", T0, ScenarioState.Completed),
            Finished("s1", "tcp", T0.AddMinutes(1), ScenarioState.Failed),
            Finished("s2", "uds", T0.AddMinutes(2), ScenarioState.Completed),
            Finished("s3", "uds", T0.AddMinutes(2), ScenarioState.Stopped),
            Finished("s4", "tcp", T0.AddMinutes(3), ScenarioState.Completed),
        };
        store.Write([.. all.Select(s => new ProtoWrite(s.Id, s, null))], ProcessIdentity.Current);

        var pages = new List<IReadOnlyList<Scenario>>();
        ScenarioKey? after = null;
        while (true)
        {
            var page = store.Query(ScenarioFilter.None, after, 2);
            pages.Add(page);
            if (page.Count < 2)
            {
                break;
            }

            after = ProtoStore.Key(page[^1]);
        }

        Assert.Equal(["s4", "s3", "s2", "s1", "s0"], pages.SelectMany(p => p).Select(s => s.Id));
        Assert.Equal([2, 2, 1], pages.Select(p => p.Count));

        Assert.Equal(["s3", "s2", "s0"], Ids(store.Query(ScenarioFilter.None with { Transport = "uds" }, null, 10)));
        Assert.Equal(["s4", "s2", "s0"], Ids(store.Query(ScenarioFilter.None with { State = RunState.Completed }, null, 10)));
        Assert.Equal(["s4", "s3", "s2"], Ids(store.Query(ScenarioFilter.None with { CreatedAfter = T0.AddMinutes(2) }, null, 10)));
        Assert.Equal(["s1", "s0"], Ids(store.Query(ScenarioFilter.None with { CreatedBefore = T0.AddMinutes(2) }, null, 10)));
        Assert.Equal(["s2"], Ids(store.Query(new ScenarioFilter("uds", RunState.Completed, T0.AddMinutes(1), T0.AddMinutes(3)), null, 10)));

        // The in-memory filter (live scenarios) agrees with the SQL one.
        var filter = new ScenarioFilter("uds", null, T0.AddMinutes(1), null);
        Assert.Equal(Ids(store.Query(filter, null, 10)), Ids([.. all.Where(s => ProtoStore.Matches(filter, s)).OrderBy(ProtoStore.Key)]));
    }

    [Fact]
    public void Trim_DeletesTheOldestFinishedScenariosAndTheirSeries_NeverUnfinishedOnes()
    {
        var store = NewStore();
        var writes = new List<ProtoWrite>
        {
            // The oldest is still running: retention must skip it, however old.
            new("r0", Running("r0", "uds", T0.AddDays(-30)), Point(1)),
        };
        for (int i = 1; i <= 5; i++)
        {
            var id = $"f{i}";
            writes.Add(new ProtoWrite(id, Finished(id, "uds", T0.AddMinutes(i), ScenarioState.Completed), Point(1)));
        }

        store.Write(writes, ProcessIdentity.Current);

        Assert.Equal(["f1", "f2"], store.Trim(maxScenarios: 4, olderThan: null).Order());
        Assert.Equal(4, store.Count());
        Assert.Null(store.Get("f1"));
        Assert.Empty(store.Series("f1"));
        Assert.Single(store.Series("f3"));
        Assert.NotNull(store.Get("r0"));

        // By age: everything finished before f4; the running one stays.
        Assert.Equal(["f3"], store.Trim(maxScenarios: 100, olderThan: T0.AddMinutes(4)));
        Assert.Equal(["f5", "f4", "r0"], Ids(store.Query(ScenarioFilter.None, null, 10)));

        // Only running ones left beyond the limit: nothing can go.
        Assert.Equal(2, store.Trim(maxScenarios: 1, olderThan: null).Count);
        Assert.Empty(store.Trim(maxScenarios: 1, olderThan: null));
        Assert.Equal("r0", Assert.Single(store.Query(ScenarioFilter.None, null, 10)).Id);
    }

    [Fact]
    public void FailOrphans_FailsUnfinishedScenariosOfDeadOwners_AndLeavesLiveOwnersAndFinishedOnesAlone()
    {
        var store = NewStore();
        var done = Finished("done", "uds", T0, ScenarioState.Completed);
        store.Write([new ProtoWrite("done", done, null), new ProtoWrite("mine", Running("mine", "uds", T0), Point(1))], "dead:1");
        store.Write([new ProtoWrite("theirs", Running("theirs", "tcp", T0), null)], "alive:1");
        var now = T0.AddHours(1);

        var failed = store.FailOrphans(owner => owner == "alive:1", now);

        Assert.Equal(["mine"], failed);
        var mine = store.Get("mine")!;
        Assert.Equal(ScenarioState.Failed, mine.State);
        Assert.Equal("daemon restarted", mine.Error);
        Assert.Equal(Timestamp.FromDateTime(now), mine.EndedAt);
        Assert.Equal(Running("mine", "uds", T0).Stats, mine.Stats);
        Assert.Single(store.Series("mine"));
        Assert.Equal(ScenarioState.Running, store.Get("theirs")!.State);
        Assert.Equal(done, store.Get("done"));
        Assert.Equal(["mine"], Ids(store.Query(ScenarioFilter.None with { State = RunState.Failed }, null, 10)));

        // Once failed, never again.
        Assert.DoesNotContain("mine", store.FailOrphans(_ => false, now.AddHours(1)));
    }

    [Fact]
    public void ProcessIdentity_IsAliveForThisProcess_AndNotForAnEndedOrReusedPid()
    {
        Assert.True(ProcessIdentity.IsAlive(ProcessIdentity.Current));
        var (pid, start) = (ProcessIdentity.Current.Split(':')[0], ProcessIdentity.Current.Split(':')[1]);
        Assert.False(ProcessIdentity.IsAlive($"{pid}:{ulong.Parse(start, System.Globalization.CultureInfo.InvariantCulture) + 1}"));
        Assert.False(ProcessIdentity.IsAlive("999999999:1"));
        Assert.False(ProcessIdentity.IsAlive("garbage"));
    }

    [Fact]
    public async Task Writer_WithADatabaseThatCannotBeOpened_ReportsEveryWrite_AndNeverThrows()
    {
        // A regular file where the database's directory should be: no user, not even root, can create it.
        var blocker = Path.Combine(_directory, "not-a-directory");
        await File.WriteAllTextAsync(blocker, "x");
        var writer = NewWriter(Path.Combine(blocker, "scenarios.db"));
        await writer.StartAsync(CancellationToken.None);

        Assert.Null(writer.Store);
        Assert.Contains("cannot be opened", writer.UnavailableReason, StringComparison.Ordinal);
        writer.Enqueue(new ProtoWrite("x1", Running("x1", "uds", T0), null));
        writer.Enqueue(new ProtoWrite("x1", null, Point(1)));
        await writer.FlushAsync();

        Assert.Equal(2, writer.WriteFailures);
        Assert.Contains("cannot be opened", writer.ErrorFor("x1"), StringComparison.Ordinal);
        await writer.StopAsync(CancellationToken.None);

        // After shutdown a late write is still reported, not thrown.
        writer.Enqueue(new ProtoWrite("x2", Running("x2", "uds", T0), null));
        Assert.Equal(3, writer.WriteFailures);
        Assert.Contains("closed", writer.ErrorFor("x2"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Writer_WithALockedDatabase_ReportsTheFailedWrite_ThenRecordsTheErrorOnTheScenario()
    {
        var writer = NewWriter(DatabasePath);
        writer.Open(new ScenarioStore(DatabasePath, busyTimeout: TimeSpan.FromMilliseconds(100)));
        writer.StartDrain();
        Assert.NotNull(writer.Store);

        using (var holder = new SqliteConnection($"Data Source={DatabasePath};Pooling=False"))
        {
            holder.Open();
            using var exclusive = holder.BeginTransaction(System.Data.IsolationLevel.Serializable);
            Scalar(holder, "INSERT INTO scenarios (id, created_at_us, transport, state, finished, owner, updated_at_us, scenario) VALUES ('lock', 0, 'uds', 6, 1, 'x', 0, x'');", exclusive);

            var clock = System.Diagnostics.Stopwatch.StartNew();
            writer.Enqueue(new ProtoWrite("k1", Running("k1", "uds", T0), Point(1)));
            await writer.FlushAsync();

            Assert.Equal(1, writer.WriteFailures);
            // The store's busy timeout bounds the wait (rounded up to Microsoft.Data.Sqlite's whole-second command
            // timeout), not the library's 30 s default; 10 s leaves room for a slow machine.
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"a write on a locked database took {clock.Elapsed}");
            Assert.Contains("database is locked", writer.ErrorFor("k1"), StringComparison.OrdinalIgnoreCase);
            exclusive.Rollback();
        }

        // The lock is gone: the next write goes through and carries the earlier failure in the row.
        writer.Enqueue(new ProtoWrite("k1", Finished("k1", "uds", T0, ScenarioState.Completed), null));
        await writer.FlushAsync();
        await writer.StopAsync(CancellationToken.None);

        Assert.Equal(1, writer.WriteFailures);
        var stored = writer.Store!.Get("k1") is { } k1 ? ScenarioProtos.ToProto(k1) : null;
        Assert.Equal(ScenarioState.Completed, stored?.State);
        Assert.Contains("database is locked", stored?.StorageError, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task Writer_FlushesQueuedWritesOnStop_AndAppliesRetentionToTheDatabase()
    {
        var writer = NewWriter(DatabasePath, maxRetained: 3);
        await writer.StartAsync(CancellationToken.None);
        for (int i = 0; i < 6; i++)
        {
            writer.Enqueue(new ProtoWrite($"w{i}", Finished($"w{i}", "uds", T0.AddMinutes(i), ScenarioState.Completed), Point(1)));
        }

        await writer.StopAsync(CancellationToken.None);

        var store = NewStore();
        Assert.Equal(0, writer.WriteFailures);
        Assert.Equal(["w5", "w4", "w3"], Ids(store.Query(ScenarioFilter.None, null, 10)));
        Assert.Empty(store.Series("w0"));
    }

    private StoreWriter NewWriter(string path, int maxRetained = 1000) =>
        new(Options.Create(new DaemonOptions { DatabasePath = path, MaxRetainedScenarios = maxRetained }), NullLogger<StoreWriter>.Instance);

    private static List<string> Ids(IEnumerable<Scenario> scenarios) => [.. scenarios.Select(s => s.Id)];

    private static Scenario Running(string id, string transport, DateTime created) => new()
    {
        Id = id,
        Spec = new ScenarioSpec { Transport = transport, Publishers = 1, Subscribers = 2, PayloadBytes = 64 },
        State = ScenarioState.Running,
        CreatedAt = Timestamp.FromDateTime(created),
        StartedAt = Timestamp.FromDateTime(created.AddSeconds(1)),
        Stats = new ScenarioStats { MessagesSent = 10, MessagesReceived = 20 },
    };

    private static Scenario Finished(string id, string transport, DateTime created, ScenarioState state)
    {
        var scenario = Running(id, transport, created);
        scenario.State = state;
        scenario.EndedAt = Timestamp.FromDateTime(created.AddSeconds(3));
        scenario.Error = state == ScenarioState.Failed ? "agent 1 (pid 4711) was killed" : string.Empty;
        scenario.Stats = new ScenarioStats
        {
            MessagesSent = 1000,
            MessagesReceived = 2000,
            MessagesExpected = 2000,
            MessagesPerSecond = 1234.5,
            BytesPerSecond = 1234.5 * 64,
            MeasuredDuration = Duration.FromTimeSpan(TimeSpan.FromSeconds(2)),
            Latency = new LatencyStats { Kind = LatencyKind.OneWay, Samples = 2000, P50 = new Duration { Nanos = 1500 }, P99 = new Duration { Nanos = 9000 } },
        };
        scenario.Stats.Processes.Add(new ProcessStats { Role = "daemon", Index = -1, Pid = 1, CpuSeconds = 0.5, CpuPercent = 25 });
        scenario.Environment = new EnvironmentInfo { LogicalCores = 2, CpuModel = "Test CPU", Kernel = "6.1" };
        return scenario;
    }

    private static HdrInterval Interval(int index, long startMs, long endMs)
    {
        var histogram = IpcBench.Workload.LatencyHistograms.Create();
        histogram.RecordValueWithCount(1000 + index, 10 + index);
        return new HdrInterval(index, startMs, endMs, new IpcBench.Workload.HistogramCodec().Encode(histogram));
    }

    private static IntervalStats Point(int second) => new()
    {
        Elapsed = Duration.FromTimeSpan(TimeSpan.FromSeconds(second)),
        MessagesPerSecond = 1000 + second,
        BytesPerSecond = (1000 + second) * 64,
        Latency = new LatencyStats
        {
            Kind = LatencyKind.OneWay,
            Samples = (ulong)(1000 + second),
            Min = new Duration { Nanos = 100 },
            P50 = new Duration { Nanos = 1000 + second },
            P90 = new Duration { Nanos = 2000 },
            P99 = new Duration { Nanos = 5000 },
            P999 = new Duration { Nanos = 7000 },
            Max = new Duration { Seconds = 1, Nanos = 5 },
            Mean = new Duration { Nanos = 1200 },
        },
        DaemonCpuPercent = 50 + second,
        AgentsCpuPercent = 80.5,
    };

    private static object? Scalar(SqliteConnection connection, string sql, SqliteTransaction? transaction = null)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = sql;
        return command.ExecuteScalar();
    }
}
