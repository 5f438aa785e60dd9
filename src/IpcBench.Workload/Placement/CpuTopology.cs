using System.Globalization;

namespace IpcBench.Workload.Placement;

/// <summary>One CPU as /sys/devices/system/cpu/cpuN describes it; "unknown" (or null) wherever the kernel says nothing.</summary>
/// <param name="SmtSiblings">The hardware threads of its physical core, itself included (thread_siblings_list).</param>
/// <param name="Caches">Per cache (e.g. "L2 Unified"), the CPUs sharing it (cache/index*/shared_cpu_list).</param>
public sealed record CpuDescription(int Cpu, CpuSet? SmtSiblings, string CoreId, string PackageId, string NumaNode,
    IReadOnlyDictionary<string, CpuSet> Caches);

/// <summary>How two CPUs relate: what a message between a publisher on one and a subscriber on the other crosses.</summary>
/// <param name="SharedCaches">Caches both use, e.g. ["L1 Data", "L2 Unified", "L3 Unified"]; empty when none is shared or the kernel does not say.</param>
public sealed record CpuPairRelation(int CpuA, int CpuB, bool? SamePhysicalCore, bool? SamePackage, bool? SameNumaNode,
    IReadOnlyList<string> SharedCaches)
{
    /// <summary>"same core (SMT siblings)", "same package, other core", ...: the one line a report shows.</summary>
    public string Summary => CpuA == CpuB ? "same CPU"
        : SamePhysicalCore == true ? "SMT siblings (same physical core)"
        : SamePackage == true ? "same package, other core"
        : SamePackage == false ? "other package"
        : SysFiles.Unknown;
}

/// <summary>Reads the CPU topology under /sys/devices/system/cpu (or another root, for tests).</summary>
public sealed class CpuTopology(string root = "/sys/devices/system/cpu")
{
    public CpuDescription Describe(int cpu)
    {
        var dir = Path.Combine(root, $"cpu{cpu}");
        var caches = new Dictionary<string, CpuSet>(StringComparer.Ordinal);
        var cacheDir = Path.Combine(dir, "cache");
        if (Directory.Exists(cacheDir))
        {
            foreach (var index in Directory.EnumerateDirectories(cacheDir, "index*").Order(StringComparer.Ordinal))
            {
                var level = SysFiles.ReadTrimmed(Path.Combine(index, "level"));
                var type = SysFiles.ReadTrimmed(Path.Combine(index, "type"));
                if (level is not null && type is not null && SysFiles.ReadCpuList(Path.Combine(index, "shared_cpu_list")) is { } shared)
                {
                    caches[$"L{level} {type}"] = shared;
                }
            }
        }

        return new CpuDescription(
            cpu,
            SysFiles.ReadCpuList(Path.Combine(dir, "topology", "thread_siblings_list")),
            SysFiles.ReadTrimmed(Path.Combine(dir, "topology", "core_id")) ?? SysFiles.Unknown,
            SysFiles.ReadTrimmed(Path.Combine(dir, "topology", "physical_package_id")) ?? SysFiles.Unknown,
            NumaNodeOf(dir),
            caches);
    }

    public IReadOnlyList<CpuDescription> Describe(CpuSet cpus) => [.. cpus.Cpus.Select(Describe)];

    public CpuPairRelation Relate(int cpuA, int cpuB)
    {
        var a = Describe(cpuA);
        var b = Describe(cpuB);
        bool? sameCore = a.SmtSiblings is null ? null : a.SmtSiblings.Contains(cpuB);
        bool? samePackage = a.PackageId == SysFiles.Unknown || b.PackageId == SysFiles.Unknown ? null : a.PackageId == b.PackageId;
        bool? sameNode = a.NumaNode == SysFiles.Unknown || b.NumaNode == SysFiles.Unknown ? null : a.NumaNode == b.NumaNode;
        var shared = a.Caches.Where(c => c.Value.Contains(cpuB)).Select(c => c.Key).ToList();
        return new CpuPairRelation(cpuA, cpuB, sameCore, samePackage, sameNode, shared);
    }

    /// <summary>Whether the machine runs more than one hardware thread per core (/sys/devices/system/cpu/smt/active).</summary>
    public string SmtActive() => SysFiles.ReadTrimmed(Path.Combine(root, "smt", "active")) switch
    {
        "1" => "on",
        "0" => "off",
        _ => SysFiles.Unknown,
    };

    // cpuN/nodeM is a link the kernel creates per NUMA node the CPU belongs to.
    private static string NumaNodeOf(string cpuDir)
    {
        if (!Directory.Exists(cpuDir))
        {
            return SysFiles.Unknown;
        }

        var node = Directory.EnumerateFileSystemEntries(cpuDir, "node*")
            .Select(Path.GetFileName)
            .Select(name => int.TryParse(name.AsSpan(4), NumberStyles.None, CultureInfo.InvariantCulture, out int n) ? n : -1)
            .FirstOrDefault(n => n >= 0, -1);
        return node >= 0 ? node.ToString(CultureInfo.InvariantCulture) : SysFiles.Unknown;
    }
}
