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
        var stored = running.Clone();
        stored.Spec.LatencySampleEvery = 64;
        stored.Spec.PublisherCpus = "0-1";
        stored.Spec.SubscriberCpus = string.Empty;
        stored.Spec.RealtimePriority = 0;
        stored.Spec.LockMemory = false;
        stored.Spec.MaxNoisePercent = 5;
        stored.Environment = new EnvironmentInfo { LogicalCores = 2, CoreToCoreRoundTrip = new Duration { Nanos = 87 }, CoreToCoreCores = "0<->1" };

        Assert.Equal(running, ScenarioProtos.ToProto(ScenarioProtos.FromProto(running)));
        Assert.Equal(stored, ScenarioProtos.ToProto(ScenarioProtos.FromStoredBytes(Google.Protobuf.MessageExtensions.ToByteArray(stored))));
        Assert.Null(ScenarioProtos.FromProto(running).Environment);
        Assert.Null(ScenarioProtos.FromProto(running).Spec!.LatencySampleEvery);
        Assert.Null(ScenarioProtos.FromProto(running).Spec!.LockMemory);
    }
}
