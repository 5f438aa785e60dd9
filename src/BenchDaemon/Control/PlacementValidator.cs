using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload.Placement;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The placement fields of a spec: CPU lists that parse and name CPUs the daemon may use (INVALID_ARGUMENT), a
/// priority in 0..99 (INVALID_ARGUMENT) that this process may take (FAILED_PRECONDITION naming the capability or
/// limit missing), memory locking it may do, and never a realtime thread that polls while the kernel's realtime
/// throttling is off: on a 2-core machine two such threads take both cores from everything else, the daemon included.
/// </summary>
public sealed class PlacementValidator(Func<PlacementLimits> readLimits)
{
    public ScenarioPlacement Resolve(ScenarioSpec spec, WaitMode waitMode)
    {
        ArgumentNullException.ThrowIfNull(spec);
        bool any = spec.PublisherCpus.Length > 0 || spec.SubscriberCpus.Length > 0 || spec.RealtimePriority != 0 || spec.LockMemory;
        if (spec.RealtimePriority < 0 || spec.RealtimePriority > RealtimePermission.MaxPriority)
        {
            throw Invalid("spec.realtime_priority", $"must be 0 (normal scheduling) to {RealtimePermission.MaxPriority} (SCHED_FIFO at that level); got {spec.RealtimePriority}");
        }

        double? maxNoise = null;
        if (spec.HasMaxNoisePercent)
        {
            maxNoise = spec.MaxNoisePercent;
            if (double.IsNaN(spec.MaxNoisePercent) || spec.MaxNoisePercent <= 0 || spec.MaxNoisePercent > 100)
            {
                throw Invalid("spec.max_noise_percent", $"must be greater than 0 and at most 100 (percent of the machine), or absent for no bound; got {spec.MaxNoisePercent}");
            }
        }

        var publisherCpus = ParseCpus("spec.publisher_cpus", spec.PublisherCpus);
        var subscriberCpus = ParseCpus("spec.subscriber_cpus", spec.SubscriberCpus);
        if (!any)
        {
            return ScenarioPlacement.None with { MaxNoisePercent = maxNoise };
        }

        var limits = readLimits();
        RequireAllowed("spec.publisher_cpus", publisherCpus, limits);
        RequireAllowed("spec.subscriber_cpus", subscriberCpus, limits);
        if (spec.RealtimePriority > 0)
        {
            if (limits.WhyNotPriority(spec.RealtimePriority) is { } why)
            {
                throw new RequestRefusedException(RefusalKind.FailedPrecondition, "spec.realtime_priority", why);
            }

            if (waitMode != WaitMode.Block && limits.RealtimeUnthrottled)
            {
                throw new RequestRefusedException(RefusalKind.FailedPrecondition, "spec.realtime_priority",
                    $"SCHED_FIFO with WAIT_STRATEGY_{waitMode.ToString().ToUpperInvariant()} is refused while realtime throttling is off "
                    + "(/proc/sys/kernel/sched_rt_runtime_us is -1): a realtime thread that polls never gives its CPU back and can starve the machine. "
                    + "Use WAIT_STRATEGY_BLOCK, or turn throttling on (sysctl kernel.sched_rt_runtime_us=950000)");
            }
        }

        if (spec.LockMemory && limits.WhyNotLockMemory() is { } whyNotLock)
        {
            throw new RequestRefusedException(RefusalKind.FailedPrecondition, "spec.lock_memory", whyNotLock);
        }

        return new ScenarioPlacement(publisherCpus, subscriberCpus, spec.RealtimePriority, spec.LockMemory, maxNoise);
    }

    private static CpuSet ParseCpus(string field, string text)
    {
        if (text.Length > 1000)
        {
            throw Invalid(field, $"must be at most 1000 characters; got {text.Length}");
        }

        try
        {
            return CpuSet.Parse(text);
        }
        catch (FormatException e)
        {
            throw Invalid(field, e.Message);
        }
    }

    private static void RequireAllowed(string field, CpuSet cpus, PlacementLimits limits)
    {
        if (!cpus.IsEmpty && limits.Cpus.WhyNot(cpus) is { } why)
        {
            throw Invalid(field, why);
        }
    }

    private static RequestRefusedException Invalid(string field, string message) => new(RefusalKind.InvalidArgument, field, message);
}
