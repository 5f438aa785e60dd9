using IpcBench.Workload;
using IpcBench.Workload.Placement;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The probes a result will carry, read against this machine's real /sys and /proc (compared with the files
/// themselves), and against small made-up trees for what this machine lacks (caches, SMT, cgroup quotas).
/// </summary>
[Collection(nameof(SerialMeasurements))]
public sealed class PlacementProbeTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("ipcbench-sysfs-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void CpuTopology_OfThisMachine_IsWhatSysfsSays()
    {
        var cpu0 = new CpuTopology().Describe(0);

        var siblings = Read("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
        Assert.Equal(siblings ?? "(none)", cpu0.SmtSiblings?.ToString() ?? "(none)");
        Assert.Equal(Read("/sys/devices/system/cpu/cpu0/topology/core_id") ?? "unknown", cpu0.CoreId);
        var node = Directory.Exists("/sys/devices/system/cpu/cpu0")
            ? Directory.EnumerateFileSystemEntries("/sys/devices/system/cpu/cpu0", "node*").Select(p => Path.GetFileName(p)[4..]).FirstOrDefault()
            : null;
        Assert.Equal(node ?? "unknown", cpu0.NumaNode);
        Assert.Equal(Directory.Exists("/sys/devices/system/cpu/cpu0/cache") ? Directory.GetDirectories("/sys/devices/system/cpu/cpu0/cache", "index*").Length : 0, cpu0.Caches.Count);
        if (Environment.ProcessorCount > 1 && siblings is not null)
        {
            Assert.Equal(CpuSet.Parse(siblings).Contains(1), new CpuTopology().Relate(0, 1).SamePhysicalCore);
        }
    }

    [Fact]
    public void ClockProbe_NamesTheKernelsClocksource_AndMeasuresARead()
    {
        var clock = ClockProbe.Measure();

        Assert.Equal(Read("/sys/devices/system/clocksource/clocksource0/current_clocksource") ?? "unknown", clock.Source);
        // A read of any clocksource takes longer than nothing and less than a millisecond.
        Assert.InRange(clock.ReadNanoseconds, 0.5, 1_000_000);
    }

    [Fact]
    public void CpuTopology_RelatesSmtSiblingsAndSharedCaches()
    {
        // Two cores of two hardware threads each: CPUs 0 and 2 share core 0, its L1 and L2; all four share the L3.
        WriteCpu(0, siblings: "0,2", core: "0");
        WriteCpu(2, siblings: "0,2", core: "0");
        WriteCpu(1, siblings: "1,3", core: "1");
        foreach (int cpu in new[] { 0, 1, 2 })
        {
            string own = cpu == 1 ? "1,3" : "0,2";
            WriteCache(cpu, 0, 1, "Data", own);
            WriteCache(cpu, 2, 2, "Unified", own);
            WriteCache(cpu, 3, 3, "Unified", "0-3");
        }

        var topology = new CpuTopology(_root);
        var siblings = topology.Relate(0, 2);
        var neighbours = topology.Relate(0, 1);

        Assert.True(siblings.SamePhysicalCore);
        Assert.Equal(["L1 Data", "L2 Unified", "L3 Unified"], siblings.SharedCaches);
        Assert.Equal("SMT siblings (same physical core)", siblings.Summary);
        Assert.False(neighbours.SamePhysicalCore);
        Assert.Equal(["L3 Unified"], neighbours.SharedCaches);
        Assert.Equal("same package, other core", neighbours.Summary);
        Assert.Equal("0", topology.Describe(0).NumaNode);
    }

    [Fact]
    public void Probes_OfMissingFiles_SayUnknown_AndThrowNothing()
    {
        var missing = Path.Combine(_root, "nothing-here");
        var topology = new CpuTopology(missing);
        var tuning = MachineTuning.Read(CpuSet.Parse("0"), missing);

        var cpu = topology.Describe(0);
        Assert.Null(cpu.SmtSiblings);
        Assert.Equal("unknown", cpu.NumaNode);
        Assert.Empty(cpu.Caches);
        Assert.Null(topology.Relate(0, 1).SamePhysicalCore);
        Assert.Equal("unknown", topology.Relate(0, 1).Summary);
        Assert.Equal("unknown", topology.SmtActive());
        Assert.Equal("unknown", tuning.Governor[0]);
        Assert.Equal("unknown", tuning.FrequencyDriver[0]);
        Assert.Equal("unknown", tuning.IsolatedCpus);
        Assert.Equal("unknown", MachineTuning.SelectedMode(null));
        Assert.Equal("unknown", new Cgroups([], []).CpuQuota());
        Assert.Null(new Cgroups([], []).EffectiveCpus());
    }

    [Fact]
    public void MachineTuning_OfThisMachine_IsWhatTheKernelSays()
    {
        var tuning = MachineTuning.Read(CpuSet.Parse("0"));

        Assert.Equal(Read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") ?? "unknown", tuning.Governor[0]);
        Assert.Equal(Read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver") ?? "unknown", tuning.FrequencyDriver[0]);
        Assert.Equal(Read("/sys/devices/system/cpu/isolated") ?? "unknown", tuning.IsolatedCpus);
        Assert.Equal(Read("/sys/devices/system/cpu/nohz_full") ?? "unknown", tuning.NohzFullCpus);
        var thp = Read("/sys/kernel/mm/transparent_hugepage/enabled");
        Assert.Equal(thp is null ? "unknown" : thp.Split('[', ']')[1], tuning.TransparentHugePages);
        Assert.False(string.IsNullOrEmpty(tuning.CgroupCpuQuota));
        Assert.Equal("madvise", MachineTuning.SelectedMode("always [madvise] never"));
    }

    [Fact]
    public void Cgroups_FindTheQuotaAndCpuset_OfV2AndV1()
    {
        var v2 = Path.Combine(_root, "v2");
        Directory.CreateDirectory(Path.Combine(v2, "box", "inner"));
        File.WriteAllText(Path.Combine(v2, "box", "cpu.max"), "150000 100000\n");
        File.WriteAllText(Path.Combine(v2, "box", "inner", "cpu.max"), "max 100000\n");
        File.WriteAllText(Path.Combine(v2, "box", "inner", "cpuset.cpus.effective"), "0-1\n");
        var cgroupV2 = new Cgroups(["0::/box/inner"], [$"30 20 0:26 / {v2} rw,nosuid - cgroup2 cgroup2 rw"]);

        Assert.Equal($"1.50 CPUs (cpu.max 150000 100000 at {Path.Combine(v2, "box")})", cgroupV2.CpuQuota());
        Assert.Equal("0-1", cgroupV2.EffectiveCpus()?.Cpus.ToString());

        var v1 = Path.Combine(_root, "v1");
        Directory.CreateDirectory(Path.Combine(v1, "cpu", "job"));
        Directory.CreateDirectory(Path.Combine(v1, "cpuset", "job"));
        File.WriteAllText(Path.Combine(v1, "cpu", "job", "cpu.cfs_quota_us"), "50000\n");
        File.WriteAllText(Path.Combine(v1, "cpu", "job", "cpu.cfs_period_us"), "100000\n");
        File.WriteAllText(Path.Combine(v1, "cpuset", "job", "cpuset.effective_cpus"), "1\n");
        var cgroupV1 = new Cgroups(
            ["3:cpuset:/job", "2:cpu,cpuacct:/job", "0::/"],
            [$"31 20 0:27 / {Path.Combine(v1, "cpu")} rw - cgroup cgroup rw,cpu,cpuacct", $"32 20 0:28 / {Path.Combine(v1, "cpuset")} rw - cgroup cgroup rw,cpuset"]);

        Assert.Equal($"0.50 CPUs (cpu.cfs_quota_us 50000 / cpu.cfs_period_us 100000 at {Path.Combine(v1, "cpu", "job")})", cgroupV1.CpuQuota());
        Assert.Equal("1", cgroupV1.EffectiveCpus()?.Cpus.ToString());
    }

    [Fact]
    public void NoiseSampler_CountsOthersCpu_AsAShareOfTheMachine()
    {
        var proc = Path.Combine(_root, "proc");
        Directory.CreateDirectory(Path.Combine(proc, "42"));
        Directory.CreateDirectory(Path.Combine(proc, "43"));
        WriteProc(proc, "cpu  100 0 100 800 0 0 0 0 0 0", ownTicks: 50, loadavg: "0.50 0.40 0.30 1/100 42");
        File.WriteAllText(Path.Combine(proc, "43", "stat"), ProcessStat(7));
        var before = NoiseSample.Take([42], proc);
        // 1000 ticks pass, 300 of them busy; ours used 100: others used 200, 20 % of the machine. Pid 43 was not ours before, so it is not ours now.
        WriteProc(proc, "cpu  300 0 200 1500 0 0 0 0 0 0", ownTicks: 150, loadavg: "1.25 0.40 0.30 1/100 42");
        var after = NoiseSample.Take([42, 43, 4242], proc);

        Assert.Equal(20.0, after.NoisePercentSince(before)!.Value, 6);
        Assert.Equal(1.25, after.LoadAverage1m);
        Assert.Null(before.NoisePercentSince(before));
        Assert.Equal(0.0, after.StealPercentSince(before)!.Value, 6);
    }

    [Fact]
    public void NoiseSampler_SaysHowMuchOfTheNoiseWasSteal()
    {
        var proc = Path.Combine(_root, "proc");
        Directory.CreateDirectory(Path.Combine(proc, "42"));
        WriteProc(proc, "cpu  100 0 100 800 0 0 0 10 0 0", ownTicks: 50, loadavg: "0.50 0.40 0.30 1/100 42");
        var before = NoiseSample.Take([42], proc);
        // 1000 ticks pass: ours 150 more, steal 60 more, nobody else: all of the noise (6 %) is the hypervisor's.
        WriteProc(proc, "cpu  200 0 150 1590 0 0 0 70 0 0", ownTicks: 200, loadavg: "0.50 0.40 0.30 1/100 42");
        var after = NoiseSample.Take([42], proc);

        Assert.Equal(6.0, after.NoisePercentSince(before)!.Value, 6);
        Assert.Equal(6.0, after.StealPercentSince(before)!.Value, 6);
    }

    [Fact]
    public void NoiseSampler_OnThisMachine_IsAShareBetween0And100()
    {
        var before = NoiseSample.Take([Environment.ProcessId]);
        Thread.Sleep(200);
        var after = NoiseSample.Take([Environment.ProcessId]);

        Assert.True(after.TotalTicks >= before.TotalTicks);
        Assert.Contains(Environment.ProcessId, after.OwnTicksByPid.Keys);
        if (after.NoisePercentSince(before) is { } noise)
        {
            Assert.InRange(noise, 0, 100);
        }

        Assert.False(double.IsNaN(after.LoadAverage1m));
    }

    [Fact]
    public void CoreToCoreProbe_ProbesTheGivenPair()
    {
        var allowed = AllowedCpus.OfThisProcess().Allowed;
        if (allowed.Count < 2)
        {
            Assert.Null(CoreToCoreProbe.Measure(TimeSpan.FromMilliseconds(5), 0, 0));
            return;
        }

        var probe = CoreToCoreProbe.Measure(TimeSpan.FromMilliseconds(5), allowed.Cpus[1], allowed.Cpus[0]);

        Assert.Null(CoreToCoreProbe.Measure(TimeSpan.FromMilliseconds(5), allowed.Cpus[0], allowed.Cpus[0]));
        // Null only when the machine was too busy to finish: then there is nothing to compare.
        if (probe is not null)
        {
            Assert.Equal($"{allowed.Cpus[1]}<->{allowed.Cpus[0]}", probe.Cores);
            Assert.True(probe.MedianRoundTripNs > 0);
            // The median of the short probes, each its own figure.
            Assert.Equal(CoreToCoreProbe.ShortProbes, probe.ShortProbeNs.Count);
            Assert.Equal(probe.ShortProbeNs.Order().ElementAt(CoreToCoreProbe.ShortProbes / 2), probe.MedianRoundTripNs);
            Assert.InRange(probe.MedianRoundTripNs, probe.MinNs, probe.MaxNs);
        }
    }

    private static string? Read(string path) => File.Exists(path) ? File.ReadAllText(path).Trim() : null;

    private static string ProcessStat(long ticks) => $"42 (bench agent) S 1 42 42 0 -1 0 0 0 0 0 {ticks - 1} 1 0 0 20 0 1 0 100 0 0";

    private static void WriteProc(string proc, string cpuLine, long ownTicks, string loadavg)
    {
        File.WriteAllText(Path.Combine(proc, "stat"), $"{cpuLine}\ncpu0 0 0 0 0 0 0 0 0 0 0\n");
        File.WriteAllText(Path.Combine(proc, "42", "stat"), ProcessStat(ownTicks));
        File.WriteAllText(Path.Combine(proc, "loadavg"), loadavg);
    }

    private void WriteCpu(int cpu, string siblings, string core)
    {
        var topology = Path.Combine(_root, $"cpu{cpu}", "topology");
        Directory.CreateDirectory(topology);
        Directory.CreateDirectory(Path.Combine(_root, $"cpu{cpu}", "node0"));
        File.WriteAllText(Path.Combine(topology, "thread_siblings_list"), siblings + "\n");
        File.WriteAllText(Path.Combine(topology, "core_id"), core + "\n");
        File.WriteAllText(Path.Combine(topology, "physical_package_id"), "0\n");
    }

    private void WriteCache(int cpu, int index, int level, string type, string shared)
    {
        var dir = Path.Combine(_root, $"cpu{cpu}", "cache", $"index{index}");
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "level"), $"{level}\n");
        File.WriteAllText(Path.Combine(dir, "type"), type + "\n");
        File.WriteAllText(Path.Combine(dir, "shared_cpu_list"), shared + "\n");
    }
}
