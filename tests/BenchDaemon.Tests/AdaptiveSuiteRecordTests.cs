using System.Text.Json.Nodes;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Reports;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// An adaptive suite's target and each cell's stop as the store keeps them (and reads rows written before they
/// existed), as GetSuite answers them, and the scenarios_total they make: no daemon, no measuring.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class AdaptiveSuiteRecordTests : IDisposable
{
    private static readonly DateTime T0 = new(2026, 5, 1, 12, 0, 0, DateTimeKind.Utc);
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "adaptive-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        SqliteConnection.ClearAllPools();
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    [Fact]
    public void TheStore_KeepsTheTargetAndEachCellsStop()
    {
        var store = NewStore();
        var suite = Adaptive();

        store.Write(suite, "owner");
        var read = store.Get(suite.Id)!;

        Assert.Equal(new AdaptiveTarget(2.5, 12), read.Adaptive);
        Assert.Equal([CellStop.TargetReached, CellStop.MaxRepetitions, CellStop.SuiteStopped], read.Cells.Select(c => c.Stop));
        Assert.Equal(suite.ScenariosTotal, read.ScenariosTotal);
    }

    /// <summary>A row written before adaptive repetitions: no Adaptive, no Stop in its JSON. It reads as a fixed-repetition suite.</summary>
    [Fact]
    public void ARowWithoutTheNewFields_ReadsAsFixedRepetitions()
    {
        var store = NewStore();
        var suite = Adaptive() with { Id = "s-old", Repetitions = 3 };
        store.Write(suite, "owner");
        string json;
        using (var connection = Open())
        {
            using var select = connection.CreateCommand();
            select.CommandText = "SELECT suite FROM suites WHERE id = 's-old';";
            var row = JsonNode.Parse((string)select.ExecuteScalar()!)!.AsObject();
            Assert.True(row.Remove("Adaptive"), "the row must have carried the property this test removes");
            foreach (var cell in row["Cells"]!.AsArray())
            {
                Assert.True(cell!.AsObject().Remove("Stop"));
            }

            json = row.ToJsonString();
            using var update = connection.CreateCommand();
            update.CommandText = "UPDATE suites SET suite = $json WHERE id = 's-old';";
            update.Parameters.AddWithValue("$json", json);
            Assert.Equal(1, update.ExecuteNonQuery());
        }

        var read = store.Get("s-old")!;

        Assert.Null(read.Adaptive);
        Assert.All(read.Cells, c => Assert.Equal(CellStop.Unspecified, c.Stop));
        Assert.Equal(3 * 3, read.ScenariosTotal);
        var spec = SuiteProtos.SpecOf(read, preset: null);
        Assert.False(spec.HasTargetPrecisionPercent);
        Assert.Equal(0, spec.MaxRepetitions);
    }

    /// <summary>
    /// An upper bound that only falls: a cell that reached its target counts its rounds, the others their bound, so a
    /// completed suite's total is what it ran.
    /// </summary>
    [Fact]
    public void ScenariosTotal_CountsAStoppedCellsRounds_AndTheOthersBound()
    {
        var running = Adaptive() with
        {
            Cells = [Cell(5, CellStop.TargetReached), Cell(7, CellStop.Unspecified), Cell(7, CellStop.Unspecified)],
        };
        var completed = running with { Cells = [Cell(5, CellStop.TargetReached), Cell(9, CellStop.TargetReached), Cell(12, CellStop.MaxRepetitions)] };

        Assert.Equal(5 + 12 + 12, running.ScenariosTotal);
        Assert.Equal(5 + 9 + 12, completed.ScenariosTotal);
    }

    [Fact]
    public void GetSuite_ShowsTheTarget_EachCellsStop_AndItsMedianPrecision()
    {
        var suite = Adaptive();
        var report = new SuiteReport(suite.Id, suite.Name, "STOPPED", new DateTimeOffset(T0), null, 0, ReportSamples.Environment,
            [.. suite.Cells.Select((c, i) => new ReportCell(new CellKey("channels", 8 << i), TimeSpan.FromSeconds(1), TimeSpan.Zero,
                [.. c.ScenarioIds.Select((id, r) => Repetition(r + 1, id, 1e6 * (1 + 0.01 * (r % 3))))], []))]);

        var proto = SuiteProtos.ToProto(suite, report, null, preset: null);

        Assert.True(proto.Spec.HasTargetPrecisionPercent);
        Assert.Equal(2.5, proto.Spec.TargetPrecisionPercent);
        Assert.Equal(12, proto.Spec.MaxRepetitions);
        Assert.Equal(0, proto.Spec.Repetitions);
        Assert.Equal([RepetitionStop.TargetReached, RepetitionStop.MaxRepetitions, RepetitionStop.SuiteStopped], proto.Cells.Select(c => c.RepetitionStop));
        for (int i = 0; i < proto.Cells.Count; i++)
        {
            Assert.True(proto.Cells[i].Stats.HasMedianPrecisionPercent, $"cell {i}");
            Assert.Equal(report.Cells[i].Summary.MedianPrecisionPercent, proto.Cells[i].Stats.MedianPrecisionPercent);
        }

        // Through JSON, as grpcurl shows it: the enum by name, the target with its field name.
        var json = Google.Protobuf.JsonFormatter.Default.Format(proto);
        Assert.Contains("\"repetitionStop\": \"REPETITION_STOP_TARGET_REACHED\"", json, StringComparison.Ordinal);
        Assert.Contains("\"targetPrecisionPercent\": 2.5", json, StringComparison.Ordinal);
    }

    [Fact]
    public void AFixedSuitesCell_WithOneRepetition_HasNoMedianPrecision()
    {
        var summary = RepetitionStats.Summarize([Repetition(1, "a", 1e6)]);

        Assert.Null(summary.MedianPrecisionPercent);
        Assert.False(SuiteProtos.ToProto(summary).HasMedianPrecisionPercent);
    }

    private static SuiteSnapshot Adaptive() => new("s-adaptive", "adaptive", string.Empty, 0, SuiteRunState.Stopped, string.Empty, T0, T0, T0.AddMinutes(3),
        [Cell(5, CellStop.TargetReached), Cell(12, CellStop.MaxRepetitions), Cell(8, CellStop.SuiteStopped)], 25, null, null, null)
    {
        Adaptive = new AdaptiveTarget(2.5, 12),
    };

    private static SuiteCellRecord Cell(int rounds, CellStop stop) =>
        new(new RunSpec("channels", 1, 1, 8, TimeSpan.FromSeconds(1), TimeSpan.Zero, 0, RunTopology.AllToAll, RunPayloadAccess.Full, RunMode.Stream, null, "adaptive", null),
            [.. Enumerable.Range(1, rounds).Select(r => $"sc-{stop}-{r}")])
        {
            Stop = stop,
        };

    private static RepetitionResult Repetition(int round, string id, double rate) =>
        new(round, id, null, rate, rate * 8, 100, 0, LatencyPercentiles.None, []);

    private SuiteStore NewStore()
    {
        var scenarios = new ScenarioStore(DatabasePath);
        scenarios.Initialize();
        return new SuiteStore(scenarios);
    }

    private string DatabasePath => Path.Combine(_directory, "state", "scenarios.db");

    private SqliteConnection Open()
    {
        var connection = new SqliteConnection($"Data Source={DatabasePath}");
        connection.Open();
        return connection;
    }
}
