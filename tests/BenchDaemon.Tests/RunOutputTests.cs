using IpcBench.Daemon.Tests.Infrastructure;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Run;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>What `run` prints for a person: the placement facts after its tables, and its progress lines on a redirected stderr.</summary>
[Collection(LightCollection.Name)]
public sealed class RunOutputTests
{
    [Fact]
    public void Placement_IsSaidOnce_WithTheClockReadsCostAsARange()
    {
        var results = new[]
        {
            Finished("shm-ring", 8, clockReadNs: 49),
            Finished("shm-ring", 1024, clockReadNs: 40),
            Finished("uds", 8, clockReadNs: 39),
            Finished("uds", 1024, clockReadNs: 44),
        };

        var lines = ResultTables.PlacementLines(results);

        var line = Assert.Single(lines);
        Assert.Equal(
            "Placement: publishers on 0, subscribers on 1; probe pair 0↔1 (its round trip per scenario above); same physical core no, shared caches L3; " +
            "SMT off (siblings –); NUMA 1; cpufreq intel_pstate/performance; isolated [], nohz_full []; cgroup quota max; THP madvise; clock tsc, 39–49 ns a read.",
            line);
        var tables = ResultTables.Render(results);
        Assert.Single(tables.Split('\n'), l => l.StartsWith("Placement", StringComparison.Ordinal));
    }

    [Fact]
    public void Placement_OneClockReadCost_IsNoRange()
    {
        var line = Assert.Single(ResultTables.PlacementLines([Finished("uds", 8, clockReadNs: 21), Finished("uds", 64, clockReadNs: 21)]));

        Assert.EndsWith("; THP madvise; clock tsc, 21 ns a read.", line, StringComparison.Ordinal);
    }

    [Fact]
    public void Placement_LaterScenarios_SayOnlyTheFactsThatDiffer_ThoseWithTheSameDifferencesOnOneLine()
    {
        var moved = Finished("shm-ring", 1024, clockReadNs: 40);
        moved.Environment.Placement.PublisherCpus = "2";
        moved.Environment.Placement.SamePhysicalCore = true;
        var movedToo = Finished("uds", 1024, clockReadNs: 45);
        movedToo.Environment.Placement.PublisherCpus = "2";
        movedToo.Environment.Placement.SamePhysicalCore = true;
        var otherClock = Finished("uds", 8, clockReadNs: 510);
        otherClock.Environment.ClockSource = "hpet";

        var lines = ResultTables.PlacementLines([Finished("shm-ring", 8, clockReadNs: 49), moved, movedToo, otherClock]);

        Assert.Equal(3, lines.Count);
        Assert.EndsWith("; THP madvise; clock tsc, 40–49 ns a read.", lines[0], StringComparison.Ordinal);
        Assert.Equal("Placement of shm-ring 1 KB 1:1 full yield, uds 1 KB 1:1 full yield: publishers on 2; same physical core yes.", lines[1]);
        Assert.Equal("Placement of uds 8 B 1:1 full yield: clock hpet, 510 ns a read.", lines[2]);
    }

    [Fact]
    public void Placement_NoneRecorded_NoLine()
    {
        var bare = Finished("uds", 8, clockReadNs: 21);
        bare.Environment.Placement = null;

        Assert.Empty(ResultTables.PlacementLines([bare]));
    }

    [Fact]
    public void RedirectedProgress_IsOneWholeLinePerFinishedScenario_WithoutCarriageReturns()
    {
        using var error = new StringWriter();
        var progress = MatrixProgress.Plain(error);
        var scenarios = new[] { Finished("shm-ring", 8, clockReadNs: 49), Finished("uds", 8, clockReadNs: 40), Finished("uds", 1024, clockReadNs: 40) };
        scenarios[2].Stats.Validity.Add(new V1.ValidityNote { Kind = V1.ValidityKind.NoiseAboveLimit, Detail = "12 % of the machine" });

        for (int i = 0; i < scenarios.Length; i++)
        {
            // LocalSuite's polls: the running scenario every tick, then its final state once it finished (sometimes seen twice).
            var running = scenarios[i].Clone();
            running.State = ScenarioState.Running;
            running.LastInterval = new IntervalStats { MessagesPerSecond = 1_000 };
            progress.Update(i + 1, 3, running);
            progress.Update(i + 1, 3, running);
            progress.Update(i + 1, 3, scenarios[i]);
            progress.Update(i + 1, 3, scenarios[i]);
        }

        string text = error.ToString();
        Assert.DoesNotContain('\r', text.Replace(Environment.NewLine, "\n", StringComparison.Ordinal));
        Assert.Equal(
        [
            "[1/3] shm-ring 8 B 1:1 full yield: 12.30 M msg/s, COMPLETED",
            "[2/3] uds 8 B 1:1 full yield: 12.30 M msg/s, COMPLETED",
            "[3/3] uds 1 KB 1:1 full yield: 12.30 M msg/s, COMPLETED, invalid: noise above limit",
        ], text.Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries));
    }

    [Fact]
    public void RedirectedProgress_AFailedScenario_SaysWhy()
    {
        var failed = Finished("uds", 8, clockReadNs: 40);
        failed.State = ScenarioState.Failed;
        failed.Error = "agent exited with code 1";
        failed.Stats.MessagesPerSecond = 0;

        Assert.Equal("[2/4] uds 8 B 1:1 full yield: 0 msg/s, FAILED: agent exited with code 1", MatrixProgress.DescribeFinished(2, 4, failed));
    }

    private static Scenario Finished(string transport, int payloadBytes, int clockReadNs) => new()
    {
        Id = $"{transport}-{payloadBytes}",
        State = ScenarioState.Completed,
        Spec = new ScenarioSpec
        {
            Transport = transport, PayloadBytes = payloadBytes, Publishers = 1, Subscribers = 1, Topology = Topology.AllToAll,
            PayloadAccess = PayloadAccess.Full, WaitStrategy = WaitStrategy.Yield,
        },
        Stats = new ScenarioStats { MessagesPerSecond = 12_300_000 },
        Environment = new EnvironmentInfo
        {
            CoreToCoreCores = "0↔1",
            ClockSource = "tsc",
            ClockRead = new Duration { Nanos = clockReadNs },
            Placement = new PlacementInfo
            {
                PublisherCpus = "0", SubscriberCpus = "1", SamePhysicalCore = false, SharedCaches = { "L3" }, Smt = "off", SmtSiblings = "–", NumaNodes = "1",
                CpufreqDriver = "intel_pstate", CpufreqGovernor = "performance", CgroupCpuQuota = "max", TransparentHugePages = "madvise",
            },
        },
    };
}
