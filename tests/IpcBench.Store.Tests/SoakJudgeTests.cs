using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Schema;
using IpcBench.Workload;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The soak judgement on synthetic seconds, no processes: each rule fires on what it names and stays quiet on noise,
/// churn and a process's first minutes. A simulated second is one tick, as the scenario meter gives them.
/// </summary>
public sealed class SoakJudgeTests
{
    private const double MiB = 1024 * 1024;
    private static readonly SoakSettings Settings = new(TimeSpan.FromSeconds(10), TimeSpan.FromMinutes(60));

    [Fact]
    public void LineFit_AnExactLine_HasItsSlope_AndNoWidth()
    {
        var fit = new LineFit();
        for (int s = 0; s < 10; s++)
        {
            fit.Add(100 + s, 5 + 2.0 * s);
        }

        var slope = fit.Slope()!;
        Assert.Equal(2.0 * 3600, slope.PerHour, 6);
        Assert.Equal(slope.PerHour, slope.LowPerHour, 6);
        Assert.Equal(slope.PerHour, slope.HighPerHour, 6);
        Assert.Equal(TimeSpan.FromSeconds(9), slope.Span);
        Assert.Equal(14, slope.Mean, 6);
    }

    [Theory]
    [InlineData(1, 12.706)]
    [InlineData(4, 2.776)]
    [InlineData(5, 2.571)]
    [InlineData(10, 2.228)]
    [InlineData(30, 2.042)]
    [InlineData(1000, 1.962)]
    public void StudentT_MatchesTheTable_WithinOnePercent(int df, double table) =>
        Assert.InRange(LineFit.StudentT975(df), table * 0.99, table * 1.01);

    [Fact]
    public void WindowFit_ForgetsWhatLeftTheWindow()
    {
        var window = new WindowFit(5);
        for (int s = 0; s < 20; s++)
        {
            // Rising for 15 points, then flat: the window of 5 sees only the flat part.
            window.Add(s, s < 15 ? s : 15);
        }

        Assert.Equal(0, window.Slope()!.PerHour, 6);
        Assert.Equal(15, window.Mean());
    }

    [Fact]
    public void BeforeSixPoints_ItIsJudging_UnlessMessagesWereLost()
    {
        var soak = new Simulation();
        soak.Run(seconds: 50);
        Assert.Equal(SoakStatus.Judging, soak.Judge().Verdict);
        Assert.Equal(SoakStatus.Losing, soak.Judge(lost: 1).Verdict);
        soak.Run(seconds: 20);
        Assert.Equal(SoakStatus.Holding, soak.Judge().Verdict);
    }

    [Fact]
    public void AnAgentKeepingOneMiBASecond_IsLeaking_WithinThreeMinutes()
    {
        var soak = new Simulation { AgentHeap = s => 40 * MiB + s * MiB };
        soak.Run(seconds: 180);
        var judgement = soak.Judge();
        Assert.Equal(SoakStatus.Leaking, judgement.Verdict);
        Assert.Contains(judgement.Reasons, r => r.StartsWith("agent 0's managed heap", StringComparison.Ordinal));
        Assert.DoesNotContain(judgement.Reasons, r => r.StartsWith("daemon", StringComparison.Ordinal));
    }

    /// <summary>
    /// RSS is judged by its owners: grown with what the collector committed (dead objects a gen2 has not yet freed),
    /// it holds; grown with committed memory flat, the native remainder leaks.
    /// </summary>
    [Fact]
    public void ResidentMemoryTheCollectorHolds_IsNotALeak_ButNativeGrowth_Is()
    {
        var collector = new Simulation { AgentRss = s => 100 * MiB + s * MiB / 8, AgentCommitted = s => 40 * MiB + s * MiB / 8 };
        collector.Run(seconds: 600);
        var held = collector.Judge();
        Assert.True(held.Verdict == SoakStatus.Holding, string.Join("; ", held.Reasons));
        var rss = held.Processes.Single(p => p.Role == "agent").Resources.Single(r => r.Resource == ProcessResource.RssBytes);
        Assert.InRange(rss.Trend.SinceStart!.PerHour, 440 * MiB, 460 * MiB);

        var native = new Simulation { AgentRss = s => 100 * MiB + s * MiB / 8, AgentCommitted = _ => 40 * MiB };
        native.Run(seconds: 600);
        var leaking = native.Judge();
        Assert.Equal(SoakStatus.Leaking, leaking.Verdict);
        Assert.Contains(leaking.Reasons, r => r.StartsWith("agent 0's native memory since the start grew", StringComparison.Ordinal));
        Assert.DoesNotContain(leaking.Reasons, r => r.Contains("resident memory", StringComparison.Ordinal));
    }

    /// <summary>
    /// A step that levels off (a collector sizing its regions once: 25 MiB 33 minutes into a soak of 2026-11-27, flat
    /// after) reads as growth until it leaves the latest third of the window, then holds; growth that goes on leaks.
    /// </summary>
    [Fact]
    public void AStepThatLevelsOff_Holds_ButGrowthThatGoesOn_Leaks()
    {
        var random = new Random(11);
        var step = new Simulation { AgentHeap = s => (s < 33 * 60 ? 30 : 70) * MiB + random.NextDouble() * MiB };
        step.Run(seconds: 36 * 60);
        var justAfter = step.Judge();
        Assert.Equal(SoakStatus.Leaking, justAfter.Verdict);
        Assert.Contains(justAfter.Reasons, r => r.StartsWith("agent 0's managed heap since the start grew", StringComparison.Ordinal) && r.Contains("and still grows", StringComparison.Ordinal));
        step.Run(seconds: 24 * 60);
        var levelled = step.Judge();
        Assert.True(levelled.Verdict == SoakStatus.Holding, string.Join("; ", levelled.Reasons));
        Assert.True(levelled.Processes.Single(p => p.Role == "agent").Resources.Single(r => r.Resource == ProcessResource.ManagedHeapBytes)
            .Trend.SinceStart!.LowPerHour > 16 * MiB, "the line over the span still rises: only the recent fit tells a step from a leak");

        var creep = new Simulation { AgentHeap = s => 30 * MiB + s * (20 * MiB / 3600) + random.NextDouble() * MiB };
        creep.Run(seconds: 2 * 3600);
        var leaking = creep.Judge();
        Assert.Equal(SoakStatus.Leaking, leaking.Verdict);
    }

    [Fact]
    public void GarbageChurn_AndAProcesssFirstMinutes_StayHolding_ForTwoHours()
    {
        var random = new Random(7);
        var soak = new Simulation
        {
            // The heap after each collection wanders between 20 and 60 MiB; resident memory grows 6 MiB in the first
            // 30 s (JIT, pools) and then stays; threads and descriptors flicker by one.
            AgentHeap = _ => (20 + 40 * random.NextDouble()) * MiB,
            AgentRss = s => (100 + Math.Min(s, 30) / 5.0) * MiB + random.Next(0, 2) * 4096,
            AgentThreads = _ => 20 + random.Next(0, 2),
            Rate = _ => 1_000_000 * (1 + 0.02 * (random.NextDouble() - 0.5)),
        };
        for (int minute = 0; minute < 120; minute++)
        {
            soak.Run(seconds: 60);
            var judgement = soak.Judge();
            var expected = minute == 0 ? SoakStatus.Judging : SoakStatus.Holding;
            Assert.True(judgement.Verdict == expected, $"minute {minute + 1}: {judgement.Verdict}: {string.Join("; ", judgement.Reasons)}");
        }

        var final = soak.Judge();
        Assert.Equal(1_000_000, final.FirstWindowMessagesPerSecond!.Value, 1_000_000 * 0.002);
        Assert.Equal(1_000_000, final.LastWindowMessagesPerSecond!.Value, 1_000_000 * 0.002);
        // An interval that excludes zero by chance (1 in 20) is not drift: the change it shows is far below the bound.
        var rate = final.Throughput.SinceStart!;
        Assert.True(Math.Abs(rate.Change) < 0.01 * rate.Mean, $"the fitted change {rate.Change:F0} msg/s is under 1 % of {rate.Mean:F0}");
    }

    [Fact]
    public void ARateLimitedScenarioDeliveringLessThanOffered_IsDrifting()
    {
        var soak = new Simulation(offered: 10_000) { Rate = _ => 9_000 };
        soak.Run(seconds: 120);
        var judgement = soak.Judge();
        Assert.Equal(SoakStatus.Drifting, judgement.Verdict);
        Assert.Contains(judgement.Reasons, r => r.StartsWith("delivers 9000 msg/s of the 10000 offered", StringComparison.Ordinal));

        var keepingUp = new Simulation(offered: 10_000) { Rate = _ => 10_000 };
        keepingUp.Run(seconds: 120);
        Assert.Equal(SoakStatus.Holding, keepingUp.Judge().Verdict);
    }

    /// <summary>
    /// Publishers that fell behind their schedule during warm-up send the backlog first (each message keeps its intended
    /// time), so the first points deliver up to 5x the offered rate. Settling back to the offered rate is not a fall: in
    /// three daemons started at once (2026-11-28) such points read "throughput fell 53 %" on a transport that delivered
    /// the offered 4,000 msg/s for the rest of the run.
    /// </summary>
    [Fact]
    public void CatchingUpAfterWarmup_ThenHoldingTheOfferedRate_IsHolding()
    {
        var soak = new Simulation(offered: 4_000) { Rate = s => s <= 30 ? 20_000 - 500 * s : 4_000 };
        soak.Run(seconds: 300);
        var judgement = soak.Judge();
        Assert.Equal(SoakStatus.Holding, judgement.Verdict);

        var falling = new Simulation(offered: 4_000) { Rate = s => s <= 30 ? 20_000 - 500 * s : 4_000 - 3 * s };
        falling.Run(seconds: 300);
        Assert.Equal(SoakStatus.Drifting, falling.Judge().Verdict);
    }

    [Fact]
    public void AFallingRate_AndARisingP99_AreDrifting()
    {
        var falling = new Simulation { Rate = s => 1_000_000 - 1_000 * s };
        falling.Run(seconds: 300);
        Assert.Equal(SoakStatus.Drifting, falling.Judge().Verdict);
        Assert.Contains(falling.Judge().Reasons, r => r.StartsWith("throughput since the start fell", StringComparison.Ordinal));

        var slower = new Simulation { LatencyNs = s => 2_000 + 50 * s };
        slower.Run(seconds: 300);
        Assert.Equal(SoakStatus.Drifting, slower.Judge().Verdict);
        Assert.Contains(slower.Judge().Reasons, r => r.StartsWith("latency p99 since the start rose", StringComparison.Ordinal));
    }

    [Fact]
    public void LossOutranksALeak_AndEveryReasonIsListed()
    {
        var soak = new Simulation { AgentHeap = s => s * MiB };
        soak.Run(seconds: 120);
        var judgement = soak.Judge(lost: 3, corrupted: 1);
        Assert.Equal(SoakStatus.Losing, judgement.Verdict);
        Assert.Equal("3 lost, 0 duplicated, 1 corrupted", judgement.Reasons[0]);
        Assert.Contains(judgement.Reasons, r => r.Contains("managed heap", StringComparison.Ordinal));
    }

    [Fact]
    public void TheJudgement_SurvivesItsProto()
    {
        var soak = new Simulation { AgentHeap = s => s * MiB };
        soak.Run(seconds: 120);
        var judgement = soak.Judge();
        var back = SoakProtos.FromProto(SoakProtos.ToProto(judgement))!;
        Assert.Equal(judgement.Verdict, back.Verdict);
        Assert.Equal(judgement.Reasons, back.Reasons);
        Assert.Equal(judgement.Throughput, back.Throughput);
        Assert.Equal(judgement.LastP99Ns, back.LastP99Ns);
        Assert.Equal(judgement.Processes.Count, back.Processes.Count);
        Assert.Equal(judgement.Processes[1].Resources, back.Processes[1].Resources);
    }

    /// <summary>A daemon and one agent, ticked once a simulated second; every series a function of the second.</summary>
    private sealed class Simulation(double offered = 0)
    {
        private readonly HdrHistogram.LongHistogram _latency = LatencyHistograms.Create();
        private SoakJudge? _judge;
        private int _second;

        public Func<int, double> Rate { get; init; } = _ => 1_000_000;
        public Func<int, long> LatencyNs { get; init; } = _ => 2_000;
        public Func<int, double> AgentHeap { get; init; } = _ => 30 * MiB;
        public Func<int, double> AgentRss { get; init; } = _ => 100 * MiB;
        public Func<int, double>? AgentCommitted { get; init; }
        public Func<int, int> AgentThreads { get; init; } = _ => 20;

        public void Run(int seconds)
        {
            _judge ??= new SoakJudge(Settings, offered, Read);
            for (int i = 0; i < seconds; i++)
            {
                _second++;
                _latency.Reset();
                for (int m = 0; m < 100; m++)
                {
                    _latency.RecordValue(LatencyNs(_second) + m);
                }

                _judge.Tick(_second, Rate(_second), _latency);
            }
        }

        public SoakSummary Judge(long lost = 0, long corrupted = 0) => _judge!.Judge(lost, 0, corrupted);

        private IReadOnlyList<SoakProcessReading> Read() =>
        [
            new(ProcessUsage.DaemonRole, -1, 50 * MiB, new ProcessResources((long)(200 * MiB), 0, 30, 120)),
            new(ProcessUsage.AgentRole, 0, AgentHeap(_second), new ProcessResources((long)AgentRss(_second), (long)(4 * MiB), AgentThreads(_second), 40),
                AgentCommitted?.Invoke(_second)),
        ];
    }
}
