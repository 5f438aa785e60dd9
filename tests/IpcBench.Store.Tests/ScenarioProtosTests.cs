using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>The one mapping between the engine's records and control.proto: exact both ways, presence included.</summary>
public sealed class ScenarioProtosTests
{
    public static TheoryData<System.Type, System.Type> EnumPairs => new()
    {
        { typeof(RunState), typeof(ScenarioState) },
        { typeof(RunTopology), typeof(Topology) },
        { typeof(RunPayloadAccess), typeof(PayloadAccess) },
        { typeof(RunMode), typeof(Mode) },
        { typeof(RunLatencyKind), typeof(LatencyKind) },
        { typeof(Model.ValidityKind), typeof(V1.ValidityKind) },
    };

    /// <summary>The mapping casts enums: the engine's must carry the proto's names and numbers, no more, no fewer.</summary>
    [Theory]
    [MemberData(nameof(EnumPairs))]
    public void EngineEnums_MatchControlProto_NameForNameAndNumberForNumber(System.Type engine, System.Type proto)
    {
        static List<(string, int)> Members(System.Type type) =>
            [.. System.Enum.GetValues(type).Cast<object>().Select(v => (System.Enum.GetName(type, v)!, (int)v)).OrderBy(m => m.Item2)];

        Assert.Equal(Members(proto), Members(engine));
    }

    [Fact]
    public void AScenario_WithAbsentParts_ReadsBackAsItWasWritten()
    {
        var running = new Scenario
        {
            Id = "r1",
            Spec = new ScenarioSpec { Transport = "uds", Publishers = 1, Subscribers = 2, PayloadBytes = 64, Warmup = new Duration { Nanos = 500_000_000 } },
            State = ScenarioState.Running,
            CreatedAt = Timestamp.FromDateTime(new DateTime(2025, 6, 1, 0, 0, 0, DateTimeKind.Utc)),
            Stats = new ScenarioStats { MessagesSent = 10, Latency = new LatencyStats { Kind = LatencyKind.OneWay, Samples = 3, P50 = new Duration { Nanos = 351 } } },
            LastInterval = new IntervalStats { Elapsed = new Duration { Seconds = 1 }, MessagesPerSecond = 10.5 },
        };
        running.Stats.Processes.Add(new ProcessStats { Role = "daemon", Index = -1, Pid = 7, PeakRssBytes = 1 << 20 });
        running.Stats.Processes.Add(new ProcessStats { Role = "agent", Index = 0, Pid = 8, JitCompiledMethods = 0, JitTime = new Duration() });
        running.Stats.Processes.Add(new ProcessStats { Role = "agent", Index = 1, Pid = 9, JitCompiledMethods = 12, JitTime = new Duration { Nanos = 3_500_000 } });
        var stored = running.Clone();
        stored.Spec.LatencySampleEvery = 64;
        stored.Spec.PublisherCpus = "0-1";
        stored.Spec.SubscriberCpus = string.Empty;
        stored.Spec.RealtimePriority = 0;
        stored.Spec.LockMemory = false;
        stored.Spec.MaxNoisePercent = 5;
        stored.Environment = new EnvironmentInfo { LogicalCores = 2, CoreToCoreRoundTrip = new Duration { Nanos = 87 }, CoreToCoreCores = "0<->1" };
        var probedTwice = stored.Clone();
        probedTwice.Environment.CoreToCoreRoundTripAfter = new Duration { Nanos = 421 };
        probedTwice.Environment.ClockRead = new Duration { Nanos = 21 };

        Assert.Equal(running, ScenarioProtos.ToProto(ScenarioProtos.FromProto(running)));
        Assert.Equal(stored, ScenarioProtos.ToProto(ScenarioProtos.FromStoredBytes(Google.Protobuf.MessageExtensions.ToByteArray(stored))));
        Assert.Equal(probedTwice, ScenarioProtos.ToProto(ScenarioProtos.FromProto(probedTwice)));
        Assert.Equal(421, ScenarioProtos.FromProto(probedTwice).Environment!.CoreToCoreAfterNs);
        Assert.Null(ScenarioProtos.FromProto(running).Environment);
        Assert.Equal([null, new(0, TimeSpan.Zero), new(12, TimeSpan.FromMilliseconds(3.5))],
            ScenarioProtos.FromProto(running).Stats!.Processes.Select(p => p.Jit));
        Assert.Null(ScenarioProtos.FromProto(running).Spec!.LatencySampleEvery);
        Assert.Null(ScenarioProtos.FromProto(running).Spec!.LockMemory);
    }

    [Fact]
    public void PlacementNoiseAndSenderLag_ReadBackAsWritten_AndStayAbsentInEarlierResults()
    {
        var scenario = new Scenario
        {
            Id = "p1",
            State = ScenarioState.Completed,
            CreatedAt = Timestamp.FromDateTime(new DateTime(2026, 11, 25, 0, 0, 0, DateTimeKind.Utc)),
            Stats = new ScenarioStats
            {
                MessagesSent = 10,
                NoisePercent = 0,
                WarmupNoisePercent = 3.25,
                LoadAverage1M = 1.5,
                SenderLag = new SenderLagStats { Samples = 9, P50 = new Duration { Nanos = 120 }, P99 = new Duration { Nanos = 900 }, Max = new Duration { Nanos = 5_000 }, Dominates = true },
            },
            Environment = new EnvironmentInfo
            {
                LogicalCores = 2,
                CoreToCoreCores = "0<->1",
                Placement = new PlacementInfo
                {
                    PublisherCpus = "0", SubscriberCpus = "1", SmtSiblings = "0:0-1 1:0-1", SamePhysicalCore = false, NumaNodes = "0:0 1:0",
                    CpufreqDriver = "unknown", CpufreqGovernor = "unknown", IsolatedCpus = "", NohzFullCpus = "", KernelParameters = "",
                    CgroupCpuQuota = "none", TransparentHugePages = "madvise", Smt = "on",
                    SharedCaches = { "L2 Unified", "L3 Unified" },
                },
            },
        };

        var record = ScenarioProtos.FromProto(scenario);

        Assert.Equal(scenario, ScenarioProtos.ToProto(record));
        Assert.Equal(0, record.Stats!.NoisePercent);
        Assert.True(record.Stats.SenderLag!.Dominates);
        Assert.False(record.Environment!.Placement!.SamePhysicalCore);
        var earlier = new Scenario { Id = "e1", Stats = new ScenarioStats { MessagesSent = 1 }, Environment = new EnvironmentInfo { LogicalCores = 2 } };
        var earlierRecord = ScenarioProtos.FromProto(earlier);
        Assert.Null(earlierRecord.Stats!.NoisePercent);
        Assert.Null(earlierRecord.Stats.SenderLag);
        Assert.Null(earlierRecord.Environment!.Placement);
        Assert.Equal(earlier.Stats, ScenarioProtos.ToProto(earlierRecord.Stats));
    }

    [Theory]
    [InlineData(400, 1000, false)]
    [InlineData(501, 1000, true)]
    [InlineData(10, 0, false)]
    public void SenderLag_Dominates_AboveHalfTheLatencyP99(long lagP99, long latencyP99, bool dominates) =>
        Assert.Equal(dominates, SenderLagSummary.DominatesLatency(lagP99,
            new LatencySummary(RunLatencyKind.OneWay, 1, null, null, null, latencyP99, null, null, null)));
}
