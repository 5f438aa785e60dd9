using IpcBench.Daemon.Tests.Infrastructure;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>CompareScenarios' verdicts on made-up results: the rules, without the noise of real runs.</summary>
[Collection(LightCollection.Name)]
public sealed class ScenarioComparerTests
{
    [Fact]
    public void IdenticalResults_AreSameOnEveryMetric_WithRatioOne()
    {
        var result = ScenarioComparer.Compare(Result(), Result(), 5);

        Assert.Equal(ComparisonVerdict.Same, result.Verdict);
        Assert.All(result.Metrics, m => Assert.Equal(ComparisonVerdict.Same, m.Verdict));
        Assert.All(result.Metrics, m => Assert.Equal(1, m.Ratio));
        Assert.Equal(
            ["messages_per_second", "bytes_per_second", "latency_p50", "latency_p90", "latency_p99", "latency_p999", "latency_max",
             "cpu_per_message_daemon", "cpu_per_message_agent", "messages_lost", "messages_corrupted", "messages_duplicated"],
            result.Metrics.Select(m => m.Metric));
        Assert.Empty(result.Notes);
    }

    [Theory]
    [InlineData(0.90, ComparisonVerdict.Regressed)] // 10 % fewer msg/s
    [InlineData(0.95, ComparisonVerdict.Same)] // exactly at the threshold is not beyond it
    [InlineData(1.04, ComparisonVerdict.Same)]
    [InlineData(1.20, ComparisonVerdict.Improved)]
    public void Throughput_HigherIsBetter_BeyondTheThreshold(double factor, ComparisonVerdict expected)
    {
        var candidate = Result(s => { s.MessagesPerSecond *= factor; s.BytesPerSecond *= factor; });

        var result = ScenarioComparer.Compare(Result(), candidate, 5);

        var rate = result.Metrics.Single(m => m.Metric == "messages_per_second");
        Assert.Equal(expected, rate.Verdict);
        Assert.True(rate.HigherIsBetter);
        Assert.Equal(factor, rate.Ratio, 9);
        Assert.Equal((factor - 1) * 100, rate.ChangePercent, 9);
        Assert.Equal(expected, result.Verdict);
    }

    [Fact]
    public void Latency_LowerIsBetter_AndOneRegressedMetricRegressesTheWhole()
    {
        var candidate = Result(s =>
        {
            s.Latency.P50 = Ns(800); // 1000 → 800: improved
            s.Latency.P99 = Ns(13_000); // 10 000 → 13 000: regressed
        });

        var result = ScenarioComparer.Compare(Result(), candidate, 5);

        Assert.Equal(ComparisonVerdict.Improved, Metric(result, "latency_p50").Verdict);
        Assert.False(Metric(result, "latency_p50").HigherIsBetter);
        Assert.Equal(0.8, Metric(result, "latency_p50").Ratio, 9);
        Assert.Equal(ComparisonVerdict.Regressed, Metric(result, "latency_p99").Verdict);
        Assert.Equal(ComparisonVerdict.Regressed, result.Verdict);

        // A wider threshold forgives the 30 %.
        var wide = ScenarioComparer.Compare(Result(), candidate, 50);
        Assert.Equal(ComparisonVerdict.Same, Metric(wide, "latency_p99").Verdict);
        Assert.Equal(ComparisonVerdict.Same, wide.Verdict);
    }

    [Fact]
    public void CpuPerDeliveredMessage_IsPerRole_OverTheMeasuredMessages()
    {
        // Daemon: 0.5 s over 1 000 000 messages = 500 ns each; agents: 2 × 0.3 s = 600 ns each.
        var baseline = ScenarioComparer.Compare(Result(), Result(), 5);
        Assert.Equal(500, Metric(baseline, "cpu_per_message_daemon").Baseline, 6);
        Assert.Equal(600, Metric(baseline, "cpu_per_message_agent").Baseline, 6);

        var candidate = Result(s => s.Processes.Where(p => p.Role == "agent").ToList().ForEach(p => p.CpuSeconds = 0.45));
        var result = ScenarioComparer.Compare(Result(), candidate, 5);

        Assert.Equal(900, Metric(result, "cpu_per_message_agent").Candidate, 6);
        Assert.Equal(ComparisonVerdict.Regressed, Metric(result, "cpu_per_message_agent").Verdict);
        Assert.Equal(ComparisonVerdict.Same, Metric(result, "cpu_per_message_daemon").Verdict);
        Assert.Equal(ComparisonVerdict.Regressed, result.Verdict);
    }

    [Fact]
    public void InProcessTransports_HaveNoAgentCpuMetric_AndAOneSidedRoleIsNotCompared()
    {
        static void NoAgents(ScenarioStats s)
        {
            var daemon = s.Processes.Single(p => p.Role == "daemon");
            s.Processes.Clear();
            s.Processes.Add(daemon);
        }

        var inProcess = ScenarioComparer.Compare(Result(NoAgents), Result(NoAgents), 5);
        Assert.DoesNotContain(inProcess.Metrics, m => m.Metric == "cpu_per_message_agent");

        var mixed = ScenarioComparer.Compare(Result(NoAgents), Result(), 5);
        var agent = Metric(mixed, "cpu_per_message_agent");
        Assert.Equal(ComparisonVerdict.Unspecified, agent.Verdict);
        Assert.StartsWith("not compared: only the candidate has agent processes", agent.Note, StringComparison.Ordinal);
        Assert.Equal(ComparisonVerdict.Same, mixed.Verdict);
    }

    [Theory]
    [InlineData("messages_lost")]
    [InlineData("messages_corrupted")]
    [InlineData("messages_duplicated")]
    public void AnyLostCorruptedOrDuplicatedMessage_Regresses_WhateverTheThreshold(string metric)
    {
        var candidate = Result(s =>
        {
            switch (metric)
            {
                case "messages_lost": s.MessagesLost = 1; break;
                case "messages_corrupted": s.MessagesCorrupted = 1; break;
                default: s.MessagesDuplicated = 1; break;
            }
        });

        var result = ScenarioComparer.Compare(Result(), candidate, 1000);

        var m = Metric(result, metric);
        Assert.Equal(ComparisonVerdict.Regressed, m.Verdict);
        Assert.Equal(double.PositiveInfinity, m.Ratio);
        Assert.Equal(ComparisonVerdict.Regressed, result.Verdict);

        // The other way round: fewer than the baseline is an improvement.
        Assert.Equal(ComparisonVerdict.Improved, Metric(ScenarioComparer.Compare(candidate, Result(), 5), metric).Verdict);
    }

    [Fact]
    public void MissingLatency_IsNotCompared_AndDoesNotDecideTheVerdict()
    {
        var candidate = Result(s => s.Latency = new LatencyStats { Kind = LatencyKind.OneWay });

        var result = ScenarioComparer.Compare(Result(), candidate, 5);

        Assert.All(result.Metrics.Where(m => m.Metric.StartsWith("latency_", StringComparison.Ordinal)), m =>
        {
            Assert.Equal(ComparisonVerdict.Unspecified, m.Verdict);
            Assert.Equal("not compared: the candidate has no latency samples", m.Note);
        });
        Assert.Equal(ComparisonVerdict.Same, result.Verdict);

        var roundTrip = Result(s => s.Latency.Kind = LatencyKind.RoundTrip);
        Assert.Contains("latency kinds differ", Metric(ScenarioComparer.Compare(Result(), roundTrip, 5), "latency_p50").Note, StringComparison.Ordinal);
    }

    [Fact]
    public void Notes_NameSpecAndEnvironmentDifferences()
    {
        var candidate = Result();
        candidate.Spec.Transport = "tcp";
        candidate.Spec.PayloadBytes = 1024;
        candidate.Spec.Subscribers = 3;
        candidate.Environment.CpuModel = "Other CPU";
        candidate.Environment.CoreToCoreRoundTrip = Ns(450);
        candidate.Environment.CoreToCoreCores = "0<->2";

        var notes = ScenarioComparer.Compare(Result(), candidate, 5).Notes;

        Assert.Contains("transport: uds vs tcp", notes);
        Assert.Contains("payload_bytes: 64 vs 1024", notes);
        Assert.Contains("publishers:subscribers (N:M): 1:2 vs 1:3", notes);
        Assert.Contains("environment.cpu_model: Test CPU vs Other CPU", notes);
        Assert.Contains(notes, n => n.StartsWith("environment.core_to_core_round_trip: 50 ns (0<->1) vs 450 ns (0<->2)", StringComparison.Ordinal));

        // A few nanoseconds of probe noise on the same cores is not worth a note.
        var noisy = Result();
        noisy.Environment.CoreToCoreRoundTrip = Ns(55);
        Assert.Empty(ScenarioComparer.Compare(Result(), noisy, 5).Notes);
    }

    [Theory]
    [InlineData(0, 5)]
    [InlineData(0.5, 0.5)]
    [InlineData(1000, 1000)]
    public void Threshold_ZeroMeansFivePercent(double requested, double used) =>
        Assert.Equal(used, ScenarioComparer.ResolveThreshold(requested));

    [Theory]
    [InlineData(-1)]
    [InlineData(1000.5)]
    [InlineData(double.NaN)]
    [InlineData(double.PositiveInfinity)]
    public void Threshold_OutOfRange_IsInvalidArgumentNamingIt(double requested)
    {
        var e = Assert.Throws<RequestRefusedException>(() => ScenarioComparer.ResolveThreshold(requested));
        Assert.Equal(RefusalKind.InvalidArgument, e.Kind);
        Assert.StartsWith("threshold_percent: must be more than 0 and at most 1000", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(ScenarioState.Running)]
    [InlineData(ScenarioState.Failed)]
    [InlineData(ScenarioState.Pending)]
    public void UnfinishedOrFailedScenarios_AreAFailedPrecondition(ScenarioState state)
    {
        var scenario = Result();
        scenario.State = state;
        scenario.Error = state == ScenarioState.Failed ? "agent 0 died" : string.Empty;

        var e = Assert.Throws<RequestRefusedException>(() => ScenarioComparer.RequireComparable("candidate_id", scenario));

        Assert.Equal(RefusalKind.FailedPrecondition, e.Kind);
        Assert.StartsWith("candidate_id: scenario 'b' is SCENARIO_STATE_", e.Message, StringComparison.Ordinal);
        if (state == ScenarioState.Failed)
        {
            Assert.Contains("agent 0 died", e.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void AStoppedScenarioWithStats_IsComparable_AndOneWithoutStatsIsNot()
    {
        var stopped = Result();
        stopped.State = ScenarioState.Stopped;
        ScenarioComparer.RequireComparable("baseline_id", stopped);

        stopped.Stats = null;
        Assert.Equal(RefusalKind.FailedPrecondition, Assert.Throws<RequestRefusedException>(() => ScenarioComparer.RequireComparable("baseline_id", stopped)).Kind);
    }

    private static MetricComparison Metric(CompareScenariosResponse response, string name) => response.Metrics.Single(m => m.Metric == name);

    private static Duration Ns(int nanos) => new() { Nanos = nanos };

    /// <summary>A completed 1:2 uds run: 500 000 msg/s over 2 s, latency 1 µs p50, daemon 0.5 s CPU, two agents 0.3 s each.</summary>
    private static Scenario Result(Action<ScenarioStats>? change = null)
    {
        var stats = new ScenarioStats
        {
            MessagesSent = 500_000,
            MessagesReceived = 1_000_000,
            MessagesExpected = 1_000_000,
            MeasuredMessages = 1_000_000,
            MeasuredDuration = new Duration { Seconds = 2 },
            MessagesPerSecond = 500_000,
            BytesPerSecond = 500_000 * 64.0,
            Latency = new LatencyStats
            {
                Kind = LatencyKind.OneWay, Samples = 1_000_000, Min = Ns(200), P50 = Ns(1000), P90 = Ns(2000), P99 = Ns(10_000), P999 = Ns(50_000), Max = Ns(900_000),
            },
        };
        stats.Processes.Add(new ProcessStats { Role = "daemon", Index = -1, Pid = 10, CpuSeconds = 0.5, CpuPercent = 25 });
        stats.Processes.Add(new ProcessStats { Role = "agent", Index = 0, Pid = 11, CpuSeconds = 0.3, CpuPercent = 15 });
        stats.Processes.Add(new ProcessStats { Role = "agent", Index = 1, Pid = 12, CpuSeconds = 0.3, CpuPercent = 15 });
        change?.Invoke(stats);
        return new Scenario
        {
            Id = "b",
            Spec = new ScenarioSpec { Transport = "uds", Publishers = 1, Subscribers = 2, PayloadBytes = 64, Duration = new Duration { Seconds = 2 } },
            State = ScenarioState.Completed,
            Stats = stats,
            Environment = new EnvironmentInfo { LogicalCores = 2, CpuModel = "Test CPU", Kernel = "6.1", CoreToCoreRoundTrip = Ns(50), CoreToCoreCores = "0<->1" },
        };
    }
}
