using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Model;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Schema;

/// <summary>
/// The one mapping between the engine's records (Model/) and control.proto's messages: the control plane answers with
/// it, `run` prints and writes with it, and the store keeps its <see cref="Scenario"/> bytes with it. A field added to a
/// result is a field in its record and a line in each direction here. Both directions keep presence (an absent message
/// stays absent), so a stored scenario read back and shown again is byte-for-byte what was written.
/// </summary>
public static class ScenarioProtos
{
    public static Scenario ToProto(ScenarioSnapshot s)
    {
        var scenario = new Scenario
        {
            Id = s.Id,
            Spec = s.Spec is { } spec ? ToProto(spec) : null,
            State = ToProto(s.State),
            Error = s.Error,
            CreatedAt = Timestamp.FromDateTime(Utc(s.CreatedAt)),
            StartedAt = s.StartedAt is { } started ? Timestamp.FromDateTime(Utc(started)) : null,
            EndedAt = s.EndedAt is { } ended ? Timestamp.FromDateTime(Utc(ended)) : null,
            Stats = s.Stats is { } stats ? ToProto(stats) : null,
            Environment = s.Environment is { } environment ? ToProto(environment) : null,
            LastInterval = s.LastInterval is { } last ? ToProto(last) : null,
            StorageError = s.StorageError,
        };
        if (s.SuiteId.Length > 0)
        {
            scenario.SuiteId = s.SuiteId;
        }

        if (s.ResumedFrom.Length > 0)
        {
            scenario.ResumedFrom = s.ResumedFrom;
        }

        return scenario;
    }

    public static ScenarioSnapshot FromProto(Scenario s) => new(
        s.Id,
        s.Spec is { } spec ? FromProto(spec) : null,
        FromProto(s.State),
        s.Error,
        s.CreatedAt?.ToDateTime() ?? DateTime.UnixEpoch,
        s.StartedAt?.ToDateTime(),
        s.EndedAt?.ToDateTime(),
        s.Stats is { } stats ? FromProto(stats) : null,
        s.Environment is { } environment ? FromProto(environment) : null,
        s.LastInterval is { } last ? FromProto(last) : null,
        s.StorageError)
    {
        SuiteId = s.SuiteId,
        ResumedFrom = s.ResumedFrom,
    };

    /// <summary>What the store keeps per scenario: the <see cref="Scenario"/> message's protobuf bytes (its on-disk schema).</summary>
    public static byte[] ToStoredBytes(ScenarioSnapshot scenario) => ToProto(scenario).ToByteArray();

    public static ScenarioSnapshot FromStoredBytes(byte[] bytes) => FromProto(Scenario.Parser.ParseFrom(bytes));

    /// <summary>The number the store's state column keeps: ScenarioState's.</summary>
    public static int StoredState(RunState state) => (int)ToProto(state);

    public static ScenarioRecord ToProto(ScenarioResult result)
    {
        var record = new ScenarioRecord { Scenario = ToProto(result.Scenario) };
        record.Series.AddRange(result.Series.Select(ToProto));
        return record;
    }

    public static ScenarioSpec ToProto(RunSpec s)
    {
        var spec = new ScenarioSpec
        {
            Transport = s.Transport,
            Publishers = s.Publishers,
            Subscribers = s.Subscribers,
            PayloadBytes = s.PayloadBytes,
            Duration = s.Duration is { } duration ? Duration.FromTimeSpan(duration) : null,
            Warmup = s.Warmup is { } warmup ? Duration.FromTimeSpan(warmup) : null,
            RatePerPublisher = s.RatePerPublisher,
            Topology = ToProto(s.Topology),
            PayloadAccess = ToProto(s.PayloadAccess),
            Mode = ToProto(s.Mode),
            WaitStrategy = s.WaitMode is { } wait ? WaitStrategies.ToProto(wait) : WaitStrategy.Unspecified,
            Name = s.Name,
        };
        if (s.LatencySampleEvery is { } every)
        {
            spec.LatencySampleEvery = every;
        }

        if (s.PublisherCpus is { } publisherCpus)
        {
            spec.PublisherCpus = publisherCpus;
        }

        if (s.SubscriberCpus is { } subscriberCpus)
        {
            spec.SubscriberCpus = subscriberCpus;
        }

        if (s.RealtimePriority is { } priority)
        {
            spec.RealtimePriority = priority;
        }

        if (s.LockMemory is { } lockMemory)
        {
            spec.LockMemory = lockMemory;
        }

        if (s.MaxNoisePercent is { } maxNoise)
        {
            spec.MaxNoisePercent = maxNoise;
        }

        return spec;
    }

    public static RunSpec FromProto(ScenarioSpec s) => new(
        s.Transport, s.Publishers, s.Subscribers, s.PayloadBytes,
        s.Duration?.ToTimeSpan(), s.Warmup?.ToTimeSpan(), s.RatePerPublisher,
        FromProto(s.Topology), FromProto(s.PayloadAccess), FromProto(s.Mode), WaitStrategies.FromProto(s.WaitStrategy), s.Name,
        s.HasLatencySampleEvery ? s.LatencySampleEvery : null)
    {
        PublisherCpus = s.HasPublisherCpus ? s.PublisherCpus : null,
        SubscriberCpus = s.HasSubscriberCpus ? s.SubscriberCpus : null,
        RealtimePriority = s.HasRealtimePriority ? s.RealtimePriority : null,
        LockMemory = s.HasLockMemory ? s.LockMemory : null,
        MaxNoisePercent = s.HasMaxNoisePercent ? s.MaxNoisePercent : null,
    };

    public static ScenarioStats ToProto(RunStats s)
    {
        var stats = new ScenarioStats
        {
            MessagesSent = (ulong)s.MessagesSent,
            MessagesReceived = (ulong)s.MessagesReceived,
            MessagesLost = (ulong)s.MessagesLost,
            MessagesCorrupted = (ulong)s.MessagesCorrupted,
            MessagesDuplicated = (ulong)s.MessagesDuplicated,
            MessagesExpected = (ulong)s.MessagesExpected,
            MessagesPerSecond = s.MessagesPerSecond,
            BytesPerSecond = s.BytesPerSecond,
            MeasuredMessages = (ulong)s.MeasuredMessages,
            MeasuredDuration = s.MeasuredDuration is { } measured ? Duration.FromTimeSpan(measured) : null,
            Latency = s.Latency is { } latency ? ToProto(latency) : null,
            SenderLag = s.SenderLag is { } lag ? ToProto(lag) : null,
            WarmupRun = s.WarmupRun is { } warmup ? Duration.FromTimeSpan(warmup) : null,
        };
        stats.Processes.AddRange(s.Processes.Select(ToProto));
        if (s.CodeSettled is { } settled)
        {
            stats.CodeSettled = settled;
        }

        if (s.Soak is { } soak)
        {
            stats.Soak = SoakProtos.ToProto(soak);
        }

        stats.Validity.AddRange(s.Validity.Select(n => new V1.ValidityNote { Kind = (V1.ValidityKind)n.Kind, Detail = n.Detail }));
        if (s.NoisePercent is { } noise)
        {
            stats.NoisePercent = noise;
        }

        if (s.WarmupNoisePercent is { } warmupNoise)
        {
            stats.WarmupNoisePercent = warmupNoise;
        }

        if (s.LoadAverage1m is { } load)
        {
            stats.LoadAverage1M = load;
        }

        if (s.StealPercent is { } steal)
        {
            stats.StealPercent = steal;
        }

        return stats;
    }

    public static RunStats FromProto(ScenarioStats s) => new(
        (long)s.MessagesSent, (long)s.MessagesReceived, (long)s.MessagesLost, (long)s.MessagesCorrupted, (long)s.MessagesDuplicated,
        (long)s.MessagesExpected, s.MessagesPerSecond, s.BytesPerSecond, (long)s.MeasuredMessages,
        s.MeasuredDuration?.ToTimeSpan(), s.Latency is { } latency ? FromProto(latency) : null,
        [.. s.Processes.Select(FromProto)])
    {
        NoisePercent = s.HasNoisePercent ? s.NoisePercent : null,
        WarmupNoisePercent = s.HasWarmupNoisePercent ? s.WarmupNoisePercent : null,
        LoadAverage1m = s.HasLoadAverage1M ? s.LoadAverage1M : null,
        StealPercent = s.HasStealPercent ? s.StealPercent : null,
        SenderLag = s.SenderLag is { } lag ? FromProto(lag) : null,
        Validity = [.. s.Validity.Where(n => n.Kind != V1.ValidityKind.Unspecified).Select(n => new Model.ValidityNote((Model.ValidityKind)n.Kind, n.Detail))],
        WarmupRun = s.WarmupRun?.ToTimeSpan(),
        CodeSettled = s.HasCodeSettled ? s.CodeSettled : null,
        Soak = SoakProtos.FromProto(s.Soak),
    };

    public static SenderLagStats ToProto(SenderLagSummary s) => new()
    {
        Samples = (ulong)s.Samples,
        P50 = Nanoseconds(s.P50Ns),
        P99 = Nanoseconds(s.P99Ns),
        Max = Nanoseconds(s.MaxNs),
        Dominates = s.Dominates,
    };

    public static SenderLagSummary FromProto(SenderLagStats s) =>
        new((long)s.Samples, OptionalNanoseconds(s.P50), OptionalNanoseconds(s.P99), OptionalNanoseconds(s.Max), s.Dominates);

    public static LatencyStats ToProto(LatencySummary s) => new()
    {
        Kind = ToProto(s.Kind),
        Samples = (ulong)s.Samples,
        Min = Nanoseconds(s.MinNs),
        P50 = Nanoseconds(s.P50Ns),
        P90 = Nanoseconds(s.P90Ns),
        P99 = Nanoseconds(s.P99Ns),
        P999 = Nanoseconds(s.P999Ns),
        Max = Nanoseconds(s.MaxNs),
        Mean = Nanoseconds(s.MeanNs),
        P9999 = Nanoseconds(s.P9999Ns),
    };

    public static LatencySummary FromProto(LatencyStats s) => new(
        FromProto(s.Kind), (long)s.Samples, OptionalNanoseconds(s.Min), OptionalNanoseconds(s.P50), OptionalNanoseconds(s.P90),
        OptionalNanoseconds(s.P99), OptionalNanoseconds(s.P999), OptionalNanoseconds(s.Max), OptionalNanoseconds(s.Mean))
    {
        P9999Ns = OptionalNanoseconds(s.P9999),
    };

    public static IntervalStats ToProto(IntervalSample s) => new()
    {
        Elapsed = Duration.FromTimeSpan(s.Elapsed),
        MessagesPerSecond = s.MessagesPerSecond,
        BytesPerSecond = s.BytesPerSecond,
        Latency = s.Latency is { } latency ? ToProto(latency) : null,
        DaemonCpuPercent = s.DaemonCpuPercent,
        AgentsCpuPercent = s.AgentsCpuPercent,
    };

    public static IntervalSample FromProto(IntervalStats s) => new(
        s.Elapsed?.ToTimeSpan() ?? TimeSpan.Zero, s.MessagesPerSecond, s.BytesPerSecond,
        s.Latency is { } latency ? FromProto(latency) : null, s.DaemonCpuPercent, s.AgentsCpuPercent);

    public static ProcessStats ToProto(ProcessUsage p)
    {
        var stats = new ProcessStats
        {
            Role = p.Role,
            Index = p.Index,
            Pid = p.Pid,
            CpuSeconds = p.CpuSeconds,
            CpuPercent = p.CpuPercent,
            PeakRssBytes = (ulong)p.PeakRssBytes,
        };
        if (p.Jit is { } jit)
        {
            stats.JitCompiledMethods = jit.Methods;
            stats.JitTime = Duration.FromTimeSpan(jit.Time);
        }

        if (p.ScenariosBefore is { } before)
        {
            stats.ScenariosBefore = before;
        }

        return stats;
    }

    public static ProcessUsage FromProto(ProcessStats p) => new(p.Role, p.Index, p.Pid, p.CpuSeconds, p.CpuPercent, (long)p.PeakRssBytes)
    {
        Jit = p.HasJitCompiledMethods ? new JitActivity(p.JitCompiledMethods, p.JitTime?.ToTimeSpan() ?? TimeSpan.Zero) : null,
        ScenariosBefore = p.HasScenariosBefore ? p.ScenariosBefore : null,
    };

    public static EnvironmentInfo ToProto(RunEnvironment e)
    {
        var info = new EnvironmentInfo
        {
            LogicalCores = e.LogicalCores,
            CpuModel = e.CpuModel,
            Kernel = e.Kernel,
            DotnetVersion = e.DotnetVersion,
            Os = e.Os,
            Hostname = e.Hostname,
            CoreToCoreRoundTrip = e.CoreToCoreRoundTripNs is { } ns ? Nanoseconds(ns) : null,
            CoreToCoreCores = e.CoreToCoreCores,
        };
        info.Placement = e.Placement is { } p ? ToProto(p) : null;
        if (e.ClockSource.Length > 0)
        {
            info.ClockSource = e.ClockSource;
        }

        info.ClockRead = Nanoseconds(e.ClockReadNs);
        info.CoreToCoreRoundTripAfter = Nanoseconds(e.CoreToCoreAfterNs);
        if (e.PlacementClasses.Length > 0)
        {
            // Optional: results stored before classes were learned export as they did.
            info.PlacementClasses = e.PlacementClasses;
        }

        return info;
    }

    public static RunEnvironment FromProto(EnvironmentInfo e) => new(
        e.LogicalCores, e.CpuModel, e.Kernel, e.DotnetVersion, e.Os, e.Hostname,
        e.CoreToCoreRoundTrip is { } probe ? ToNanoseconds(probe) : null, e.CoreToCoreCores)
    {
        Placement = e.Placement is { } placement ? FromProto(placement) : null,
        ClockSource = e.ClockSource,
        ClockReadNs = e.ClockRead is { } read ? ToNanoseconds(read) : null,
        CoreToCoreAfterNs = e.CoreToCoreRoundTripAfter is { } after ? ToNanoseconds(after) : null,
        PlacementClasses = e.PlacementClasses,
    };

    public static PlacementInfo ToProto(PlacementFacts p)
    {
        var info = new PlacementInfo
        {
            PublisherCpus = p.PublisherCpus,
            SubscriberCpus = p.SubscriberCpus,
            SmtSiblings = p.SmtSiblings,
            NumaNodes = p.NumaNodes,
            CpufreqDriver = p.FrequencyDriver,
            CpufreqGovernor = p.Governor,
            IsolatedCpus = p.IsolatedCpus,
            NohzFullCpus = p.NohzFullCpus,
            KernelParameters = p.KernelParameters,
            CgroupCpuQuota = p.CgroupCpuQuota,
            TransparentHugePages = p.TransparentHugePages,
            Smt = p.Smt,
        };
        if (p.SamePhysicalCore is { } sameCore)
        {
            info.SamePhysicalCore = sameCore;
        }

        info.SharedCaches.AddRange(p.SharedCaches);
        return info;
    }

    public static PlacementFacts FromProto(PlacementInfo p) => new(
        p.PublisherCpus, p.SubscriberCpus, p.SmtSiblings, p.HasSamePhysicalCore ? p.SamePhysicalCore : null, [.. p.SharedCaches],
        p.NumaNodes, p.CpufreqDriver, p.CpufreqGovernor, p.IsolatedCpus, p.NohzFullCpus, p.KernelParameters, p.CgroupCpuQuota,
        p.TransparentHugePages, p.Smt);

    // Enums: the engine's members carry control.proto's numbers (ScenarioProtosTests holds names and numbers equal), so
    // a cast is exact both ways and keeps a number a newer build may have stored.
    public static ScenarioState ToProto(RunState state) => (ScenarioState)state;

    public static RunState FromProto(ScenarioState state) => (RunState)state;

    public static Topology ToProto(RunTopology topology) => (Topology)topology;

    public static RunTopology FromProto(Topology topology) => (RunTopology)topology;

    public static PayloadAccess ToProto(RunPayloadAccess access) => (PayloadAccess)access;

    public static RunPayloadAccess FromProto(PayloadAccess access) => (RunPayloadAccess)access;

    public static Mode ToProto(RunMode mode) => (Mode)mode;

    public static RunMode FromProto(Mode mode) => (RunMode)mode;

    public static LatencyKind ToProto(RunLatencyKind kind) => (LatencyKind)kind;

    public static RunLatencyKind FromProto(LatencyKind kind) => (RunLatencyKind)kind;

    /// <summary>Nanosecond precision, which TimeSpan's 100 ns ticks would lose.</summary>
    public static Duration Nanoseconds(long ns) => new() { Seconds = ns / 1_000_000_000, Nanos = (int)(ns % 1_000_000_000) };

    public static Duration? Nanoseconds(long? ns) => ns is { } value ? Nanoseconds(value) : null;

    public static long ToNanoseconds(Duration duration) => duration.Seconds * 1_000_000_000 + duration.Nanos;

    private static long? OptionalNanoseconds(Duration? duration) => duration is null ? null : ToNanoseconds(duration);

    private static DateTime Utc(DateTime time) => time.Kind == DateTimeKind.Utc ? time : DateTime.SpecifyKind(time, DateTimeKind.Utc);
}
