using System.Globalization;
using IpcBench.Daemon.Model;
using IpcBench.Workload;
using IpcBench.Workload.Placement;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The machine a scenario ran on, as its result reports it: where its hot loops ran and what relates those CPUs, and
/// the clock its latencies are read with.
/// </summary>
/// <remarks>
/// One probe per pair of CPUs at a time in the process (<see cref="MeasureShared"/>): a scenario that starts while the
/// same pair is being probed takes that probe's figure, of the same CPUs at the same moment. Scenarios that start
/// together used to probe together: eight pairs of threads pinned to the same two CPUs, each pair's figure measuring the
/// others, and each spinning while it waited for its CPUs. In a CPU-bound test run the probes' threads took ~155 of its
/// 948 CPU-s, and 22 of the 33 CPU-s of a daemon running eight scenarios at a time (perf, 2026-11-29). Not one probe
/// after another: while a queue of them ran, the scenarios already started waited for their peers, agents spinning.
/// </remarks>
internal static class EnvironmentProbe
{
    private static readonly TimeSpan ProbeTime = TimeSpan.FromMilliseconds(30);

    private static readonly Dictionary<(int, int), Lazy<CoreToCoreProbe.Result?>> InFlight = [];

    /// <summary><see cref="Read"/> on a thread of its own: it pins and spins (<see cref="OffThePool"/>).</summary>
    public static Task<RunEnvironment> ReadAsync(ResolvedSpec spec) => OffThePool.RunAsync(() => Read(spec));

    /// <summary><see cref="ProbeAgain"/> on a thread of its own.</summary>
    public static Task<long?> ProbeAgainAsync(ResolvedSpec spec) => OffThePool.RunAsync(() => ProbeAgain(spec));

    /// <summary>
    /// The probe of CPUs <paramref name="coreA"/> and <paramref name="coreB"/>, or the one of the same pair already under
    /// way (its callers block, on threads of their own, until it ends).
    /// </summary>
    private static CoreToCoreProbe.Result? MeasureShared(int coreA, int coreB)
    {
        Lazy<CoreToCoreProbe.Result?>? probe;
        bool mine;
        lock (InFlight)
        {
            mine = !InFlight.TryGetValue((coreA, coreB), out probe);
            if (mine)
            {
                probe = new Lazy<CoreToCoreProbe.Result?>(() => CoreToCoreProbe.Measure(ProbeTime, coreA, coreB));
                InFlight[(coreA, coreB)] = probe;
            }
        }

        try
        {
            return probe!.Value;
        }
        finally
        {
            if (mine)
            {
                lock (InFlight)
                {
                    InFlight.Remove((coreA, coreB));
                }
            }
        }
    }

    private static RunEnvironment Read(ResolvedSpec spec)
    {
        var machine = MachineInfo.Read();
        var (publisherCpus, subscriberCpus, pairPinned, pubCpu, subCpu) = ProbedPair(spec);

        // Between the CPUs the first publisher and subscriber ran on; unpinned, 0 and 1 as before (the result says which).
        var probe = MeasureShared(pubCpu, subCpu);
        var facts = Describe(publisherCpus, subscriberCpus, pairPinned ? (pubCpu, subCpu) : null);
        var clock = ClockProbe.Measure();
        // Nanosecond precision: TimeSpan's 100 ns ticks would hide the ~50 ns vs ~450 ns difference this probe exists for.
        return new RunEnvironment(
            machine.LogicalCores, machine.CpuModel, machine.Kernel, machine.DotnetVersion, machine.OperatingSystem, machine.Hostname,
            probe is null ? null : (long)Math.Round(probe.MedianRoundTripNs),
            probe?.Cores ?? (pubCpu == subCpu ? $"{pubCpu}<->{subCpu} (same CPU: not probed)" : $"{pubCpu}<->{subCpu} (not measured: no second CPU, or too busy)"))
        {
            Placement = facts,
            ClockSource = clock.Source,
            ClockReadNs = (long)Math.Round(clock.ReadNanoseconds),
        };
    }

    /// <summary>
    /// The probe of <see cref="Read"/> again, after the measured window: the host moves vCPUs between placements within
    /// minutes, sometimes during a run, and a probe taken only before it cannot tell.
    /// </summary>
    private static long? ProbeAgain(ResolvedSpec spec)
    {
        var (_, _, _, pubCpu, subCpu) = ProbedPair(spec);
        return MeasureShared(pubCpu, subCpu) is { } probe ? (long)Math.Round(probe.MedianRoundTripNs) : null;
    }

    private static (CpuSet PublisherCpus, CpuSet SubscriberCpus, bool PairPinned, int PublisherCpu, int SubscriberCpu) ProbedPair(ResolvedSpec spec)
    {
        var placement = spec.Placement;
        var publisherCpus = UsedCpus(placement.PublisherCpus, spec.Publishers);
        var subscriberCpus = UsedCpus(placement.SubscriberCpus, spec.Subscribers);
        bool pairPinned = !publisherCpus.IsEmpty && !subscriberCpus.IsEmpty;
        return (publisherCpus, subscriberCpus, pairPinned,
            pairPinned ? placement.PublisherCpus.AtWrapped(0) : 0, pairPinned ? placement.SubscriberCpus.AtWrapped(0) : 1);
    }

    /// <summary>The CPUs of <paramref name="list"/> that <paramref name="count"/> hot loops spread over it in order actually use.</summary>
    private static CpuSet UsedCpus(CpuSet list, int count) =>
        list.IsEmpty ? CpuSet.Empty : CpuSet.Of(Enumerable.Range(0, count).Select(list.AtWrapped));

    private static PlacementFacts Describe(CpuSet publisherCpus, CpuSet subscriberCpus, (int Publisher, int Subscriber)? pair)
    {
        var topology = new CpuTopology();
        var pinned = CpuSet.Of([.. publisherCpus.Cpus, .. subscriberCpus.Cpus]);
        // Unpinned loops may run anywhere the daemon may: describe those CPUs.
        var described = publisherCpus.IsEmpty || subscriberCpus.IsEmpty ? CpuSet.Of([.. pinned.Cpus, .. AllowedCpus.OfThisProcess().Allowed.Cpus]) : pinned;
        var cpus = topology.Describe(described);
        var relation = pair is { } p ? topology.Relate(p.Publisher, p.Subscriber) : null;
        var tuning = MachineTuning.Read(described);
        return new PlacementFacts(
            publisherCpus.IsEmpty ? PlacementFacts.Unpinned : publisherCpus.ToString(),
            subscriberCpus.IsEmpty ? PlacementFacts.Unpinned : subscriberCpus.ToString(),
            string.Join(' ', cpus.Select(c => $"{c.Cpu}:{c.SmtSiblings?.ToString() ?? SysFiles.Unknown}")),
            relation?.SamePhysicalCore,
            relation?.SharedCaches ?? [],
            string.Join(' ', cpus.Select(c => string.Create(CultureInfo.InvariantCulture, $"{c.Cpu}:{c.NumaNode}"))),
            Distinct(tuning.FrequencyDriver.Values),
            Distinct(tuning.Governor.Values),
            tuning.IsolatedCpus,
            tuning.NohzFullCpus,
            tuning.KernelParameters,
            tuning.CgroupCpuQuota,
            tuning.TransparentHugePages,
            topology.SmtActive());
    }

    private static string Distinct(IEnumerable<string> values) => string.Join(", ", values.Distinct(StringComparer.Ordinal).Order(StringComparer.Ordinal));
}
