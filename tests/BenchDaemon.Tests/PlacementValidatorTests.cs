using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload.Placement;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The placement rules that depend on the machine, checked on the daemon's own validator against machines this one is
/// not: a process without CAP_SYS_NICE, realtime throttling off, a cgroup narrower than the CPUs online. The real
/// machine's branch of each is taken end to end in PlacementScenarioTests.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class PlacementValidatorTests
{
    private const ulong CapSysNice = 1UL << 23;
    private const ulong CapIpcLock = 1UL << 14;

    private static readonly AllowedCpus FourCpusCgroupTwo = new(CpuSet.Parse("0-1"), CpuSet.Parse("0-3"), CpuSet.Parse("0-1"), "/sys/fs/cgroup/bench/cpuset.cpus.effective");

    private static SpecValidator Validator(PlacementLimits limits) => new(
        new TransportRegistry([new PollingTransport()]), Options.Create(new DaemonOptions()), () => limits);

    private static PlacementLimits Limits(ulong caps = CapSysNice | CapIpcLock, ulong rtprio = 0, long? rtRuntime = 950_000) =>
        new(FourCpusCgroupTwo, caps, rtprio, rtprio, 64 * 1024, rtRuntime);

    private static ScenarioSpec Spec(Action<ScenarioSpec> change) =>
        Specs.Stream(PollingTransport.TransportId, publishers: 2, subscribers: 1, Specs.Seconds(1)).With(change);

    [Fact]
    public void Placement_IsResolved_AndEchoedInCanonicalForm()
    {
        var resolved = Validator(Limits()).Resolve(Spec(s => { s.PublisherCpus = "1,0"; s.SubscriberCpus = "1"; s.RealtimePriority = 10; s.LockMemory = true; s.MaxNoisePercent = 5; }));

        Assert.Equal("0-1", resolved.Placement.PublisherCpus.ToString());
        Assert.Equal("1", resolved.Placement.ForPublisher(1).Cpus?.ToString());
        Assert.Equal(10, resolved.Placement.ForPublisher(0).RealtimePriority);
        var echoed = ScenarioProtos.ToProto(resolved.ToRunSpec());
        Assert.Equal("0-1", echoed.PublisherCpus);
        Assert.Equal("1", echoed.SubscriberCpus);
        Assert.True(echoed.LockMemory);
        Assert.Equal(5, echoed.MaxNoisePercent);
    }

    [Fact]
    public void ACpuOnlineButOutsideTheCgroup_IsInvalidArgument_NamingTheCgroup()
    {
        var e = Assert.Throws<RequestRefusedException>(() => Validator(Limits()).Resolve(Spec(s => s.SubscriberCpus = "3")));

        Assert.Equal(RefusalKind.InvalidArgument, e.Kind);
        Assert.Equal("spec.subscriber_cpus: CPU 3 is not in the daemon's allowed set 0-1: the daemon's cgroup allows only 0-1 (/sys/fs/cgroup/bench/cpuset.cpus.effective)", e.Message);
    }

    [Fact]
    public void APriorityWithoutCapSysNiceOrRlimit_IsFailedPrecondition_NamingBoth()
    {
        var e = Assert.Throws<RequestRefusedException>(() => Validator(Limits(caps: 0, rtprio: 5)).Resolve(Spec(s => s.RealtimePriority = 10)));

        Assert.Equal(RefusalKind.FailedPrecondition, e.Kind);
        Assert.StartsWith("spec.realtime_priority: SCHED_FIFO priority 10 needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 10", e.Message, StringComparison.Ordinal);
        Assert.Contains("RLIMIT_RTPRIO soft 5, hard 5", e.Message, StringComparison.Ordinal);
        Validator(Limits(caps: 0, rtprio: 10)).Resolve(Spec(s => s.RealtimePriority = 10));
    }

    [Theory]
    [InlineData(WaitStrategy.Spin)]
    [InlineData(WaitStrategy.Yield)]
    public void RealtimePolling_WithThrottlingOff_IsRefused(WaitStrategy wait)
    {
        var e = Assert.Throws<RequestRefusedException>(() => Validator(Limits(rtRuntime: -1)).Resolve(Spec(s => { s.RealtimePriority = 1; s.WaitStrategy = wait; })));

        Assert.Equal(RefusalKind.FailedPrecondition, e.Kind);
        Assert.StartsWith("spec.realtime_priority: ", e.Message, StringComparison.Ordinal);
        Assert.Contains("sched_rt_runtime_us is -1", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void RealtimeBlocking_WithThrottlingOff_AndPollingWithItOn_AreAccepted()
    {
        Validator(Limits(rtRuntime: -1)).Resolve(Spec(s => { s.RealtimePriority = 1; s.WaitStrategy = WaitStrategy.Block; }));
        Validator(Limits()).Resolve(Spec(s => { s.RealtimePriority = 1; s.WaitStrategy = WaitStrategy.Spin; }));
        Validator(Limits(rtRuntime: -1)).Resolve(Spec(s => s.WaitStrategy = WaitStrategy.Spin));
    }

    [Fact]
    public void LockMemoryWithoutCapIpcLock_IsFailedPrecondition()
    {
        var e = Assert.Throws<RequestRefusedException>(() => Validator(Limits(caps: CapSysNice)).Resolve(Spec(s => s.LockMemory = true)));

        Assert.Equal(RefusalKind.FailedPrecondition, e.Kind);
        Assert.StartsWith("spec.lock_memory: locking all memory needs CAP_IPC_LOCK", e.Message, StringComparison.Ordinal);
    }

    /// <summary>Capabilities only: the validator never creates endpoints.</summary>
    private sealed class PollingTransport : ITransport
    {
        public const string TransportId = "polling";

        public string Id => TransportId;

        public string Description => "A transport that polls (test double for PlacementValidator)";

        public TransportCapabilities Capabilities { get; } = new(
            CrossProcess: true,
            ZeroCopy: false,
            SupportsRoundTrip: true,
            WaitModes: [WaitMode.Spin, WaitMode.Yield, WaitMode.Block],
            DefaultWaitMode: WaitMode.Yield,
            MaxPayloadBytes: 4096);

        public string? UnavailableReason => null;

        public IPublisherEndpoint CreatePublisher(PublisherOptions options) => throw new NotSupportedException();

        public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken) => throw new NotSupportedException();
    }
}
