using Grpc.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using IpcBench.Workload.Placement;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Scenarios pinned to CPUs, raised to SCHED_FIFO and with memory locked, read back from /proc of the real daemon and
/// agent threads while they run. Every scenario here is short, paced and waits by blocking: nothing spins, least of all
/// at a realtime priority, so the class runs in the light lane.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class PlacementScenarioTests(LightDaemon shared, ITestOutputHelper output) : IClassFixture<LightDaemon>, IDisposable
{
    private static readonly TimeSpan ThreadTimeout = TimeSpan.FromSeconds(20);

    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    /// <summary>Two CPUs the daemon may use (the same one twice on a one-CPU machine).</summary>
    private static (int Publisher, int Subscriber) TwoCpus()
    {
        var allowed = AllowedCpus.OfThisProcess().Allowed.Cpus;
        return (allowed[0], allowed[allowed.Count > 1 ? 1 : 0]);
    }

    private static Task<string?> AllowedCpusOf(int pid, string thread, int expected) =>
        ProcThreads.ObserveAsync(pid, thread, tid => ProcThreads.StatusField(pid, tid, "Cpus_allowed_list"),
            expected.ToString(System.Globalization.CultureInfo.InvariantCulture), ThreadTimeout);

    private static ScenarioSpec RateLimited(string transport, int publisherCpu, int subscriberCpu) =>
        Specs.Stream(transport, publishers: 1, subscribers: 1, Specs.Seconds(2), Specs.Milliseconds(200))
            .Paced()
            .With(s =>
            {
                s.PublisherCpus = publisherCpu.ToString(System.Globalization.CultureInfo.InvariantCulture);
                s.SubscriberCpus = subscriberCpu.ToString(System.Globalization.CultureInfo.InvariantCulture);
            });

    [Fact]
    public async Task InProcess_PublisherAndReceiverThreads_RunOnTheirCpus()
    {
        var (pubCpu, subCpu) = TwoCpus();
        var started = await _daemon.StartScenarioAsync(RateLimited("channels", subCpu, pubCpu));

        var publisherCpus = await AllowedCpusOf(_daemon.Pid, "pub0", subCpu);
        var receiverCpus = await AllowedCpusOf(_daemon.Pid, "sub0-rx0", pubCpu);
        var daemonCpus = ProcThreads.StatusField(_daemon.Pid, null, "Cpus_allowed_list");
        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));

        new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 1)
            .Equal(subCpu.ToString(), publisherCpus, "Cpus_allowed_list of the daemon's pub0 thread")
            .Equal(pubCpu.ToString(), receiverCpus, "Cpus_allowed_list of the daemon's sub0-rx0 thread")
            .Equal(AllowedCpus.OfThisProcess().Allowed.ToString(), daemonCpus, "the daemon's main thread stays unpinned")
            .Equal(subCpu.ToString(), result.Spec.PublisherCpus, "spec.publisher_cpus as run")
            .Equal(pubCpu.ToString(), result.Spec.SubscriberCpus, "spec.subscriber_cpus as run")
            .Verify();
    }

    [Fact]
    public async Task CrossProcess_AgentReceiverIsPinned_AndMemoryIsLockedWhileItRuns()
    {
        var (pubCpu, subCpu) = TwoCpus();
        bool mayLock = PlacementLimits.OfThisProcess().WhyNotLockMemory() is null;
        var spec = RateLimited("uds", pubCpu, subCpu).With(s => s.LockMemory = true);
        if (!mayLock)
        {
            var refused = await Assert.ThrowsAsync<RpcException>(() => _daemon.StartScenarioAsync(spec));
            Assert.Equal(StatusCode.FailedPrecondition, refused.StatusCode);
            Assert.StartsWith("spec.lock_memory: ", refused.Status.Detail, StringComparison.Ordinal);
            spec = spec.With(s => s.LockMemory = false);
        }

        var started = await _daemon.StartScenarioAsync(spec);
        var publisherCpus = await AllowedCpusOf(_daemon.Pid, "pub0", pubCpu);
        var agent = Assert.Single(_daemon.Agents());
        var receiverCpus = await AllowedCpusOf(agent.Pid, "sub0-rx0", subCpu);
        long daemonLockedKb = ProcThreads.LockedKb(_daemon.Pid);
        long agentLockedKb = ProcThreads.LockedKb(agent.Pid);
        output.WriteLine($"while running: daemon VmLck {daemonLockedKb} kB, VmRSS {ProcThreads.StatusField(_daemon.Pid, null, "VmRSS")}; "
            + $"agent VmLck {agentLockedKb} kB, VmRSS {ProcThreads.StatusField(agent.Pid, null, "VmRSS")}");
        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));
        if (mayLock)
        {
            // The lock is released with the scenario's resources, just after its final state is published.
            await Poll.UntilAsync(() => ProcThreads.LockedKb(_daemon.Pid) == 0, TimeSpan.FromSeconds(10),
                () => $"the daemon's VmLck is still {ProcThreads.LockedKb(_daemon.Pid)} kB 10 s after the scenario ended: munlockall did not run");
        }

        var expect = new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 1)
            .Equal(pubCpu.ToString(), publisherCpus, "Cpus_allowed_list of the daemon's pub0 thread")
            .Equal(subCpu.ToString(), receiverCpus, $"Cpus_allowed_list of agent {agent.Pid}'s sub0-rx0 thread")
            .Equal(mayLock, result.Spec.LockMemory, "spec.lock_memory as run");
        if (mayLock)
        {
            expect.That(daemonLockedKb > 0, $"daemon VmLck > 0 while running ({daemonLockedKb} kB)")
                .That(agentLockedKb > 0, $"agent VmLck > 0 while running ({agentLockedKb} kB)");
        }

        expect.Verify();
    }

    /// <summary>
    /// SCHED_FIFO read back from the real threads when this process may take it (the daemon is its child, with the same
    /// capabilities and limits); FAILED_PRECONDITION naming what is missing when it may not.
    /// </summary>
    [Fact]
    public async Task RealtimePriority_IsTakenByPublisherAndAgentReceiver_OrRefusedWhenNotPermitted()
    {
        const int priority = 10;
        var (pubCpu, subCpu) = TwoCpus();
        var spec = RateLimited("uds", pubCpu, subCpu).With(s => s.RealtimePriority = priority);
        var whyNot = PlacementLimits.OfThisProcess().WhyNotPriority(priority);
        if (whyNot is not null)
        {
            var refused = await Assert.ThrowsAsync<RpcException>(() => _daemon.StartScenarioAsync(spec));
            Assert.Equal(StatusCode.FailedPrecondition, refused.StatusCode);
            Assert.Equal("spec.realtime_priority: " + whyNot, refused.Status.Detail);
            return;
        }

        var started = await _daemon.StartScenarioAsync(spec);
        var publisherScheduling = await ProcThreads.ObserveAsync(_daemon.Pid, "pub0", tid => ProcThreads.Scheduling(_daemon.Pid, tid), (priority, 1), ThreadTimeout);
        var agent = Assert.Single(_daemon.Agents());
        var receiverScheduling = await ProcThreads.ObserveAsync(agent.Pid, "sub0-rx0", tid => ProcThreads.Scheduling(agent.Pid, tid), (priority, 1), ThreadTimeout);
        var mainScheduling = ProcThreads.Scheduling(_daemon.Pid, _daemon.Pid);
        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));

        new ScenarioExpectations(result, _daemon)
            .CompletedWithoutLoss(subscribersPerPublisher: 1)
            .Equal((priority, 1), publisherScheduling, "(rt_priority, policy) of the daemon's pub0 thread: SCHED_FIFO 10")
            .Equal((priority, 1), receiverScheduling, "(rt_priority, policy) of the agent's sub0-rx0 thread: SCHED_FIFO 10")
            .Equal((0, 0), mainScheduling, "(rt_priority, policy) of the daemon's main thread: SCHED_OTHER")
            .Equal(priority, result.Spec.RealtimePriority, "spec.realtime_priority as run")
            .Verify();
    }

    /// <summary>
    /// The refusal end to end from a daemon that truly lacks CAP_SYS_NICE, CAP_IPC_LOCK and the limits: dropped from its
    /// bounding set by setpriv and its limits lowered by prlimit (util-linux), unless this process lacks them already.
    /// </summary>
    [Fact]
    public async Task ADaemonWithoutCapSysNiceOrRlimit_RefusesRealtimePriority_NamingWhatIsMissing()
    {
        var ours = PlacementLimits.OfThisProcess();
        bool alreadyUnprivileged = ours.WhyNotPriority(10) is not null;
        await using var daemon = alreadyUnprivileged ? null : await DaemonProcess.StartAsync(new DaemonSettings
        {
            Wrapper = ["prlimit", "--rtprio=0", "--memlock=65536", "setpriv", "--bounding-set=-sys_nice,-ipc_lock", "--"],
        });
        var target = daemon ?? _daemon;
        var spec = RateLimited("uds", TwoCpus().Publisher, TwoCpus().Subscriber);

        var priority = await Assert.ThrowsAsync<RpcException>(() => target.StartScenarioAsync(spec.With(s => s.RealtimePriority = 10)));
        var memory = await Assert.ThrowsAsync<RpcException>(() => target.StartScenarioAsync(spec.With(s => s.LockMemory = true)));

        output.WriteLine(priority.Status.Detail);
        Assert.Equal(StatusCode.FailedPrecondition, priority.StatusCode);
        Assert.StartsWith("spec.realtime_priority: SCHED_FIFO priority 10 needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 10", priority.Status.Detail, StringComparison.Ordinal);
        Assert.Contains("RLIMIT_RTPRIO soft", priority.Status.Detail, StringComparison.Ordinal);
        Assert.Equal(StatusCode.FailedPrecondition, memory.StatusCode);
        Assert.StartsWith("spec.lock_memory: ", memory.Status.Detail, StringComparison.Ordinal);
        if (daemon is not null)
        {
            Assert.Empty(await daemon.ListScenariosAsync());
        }
    }

    [Fact]
    public async Task ACpuThatDoesNotExist_IsInvalidArgument_NamingTheAllowedSet()
    {
        var allowed = ProcThreads.StatusField(_daemon.Pid, null, "Cpus_allowed_list");

        var e = await Assert.ThrowsAsync<RpcException>(() => _daemon.StartScenarioAsync(RateLimited("uds", 0, 0).With(s => s.SubscriberCpus = "4000")));

        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.Equal($"spec.subscriber_cpus: CPU 4000 does not exist or is offline on this machine (online: {File.ReadAllText("/sys/devices/system/cpu/online").Trim()}); the daemon may use {allowed}", e.Status.Detail);
    }
}
