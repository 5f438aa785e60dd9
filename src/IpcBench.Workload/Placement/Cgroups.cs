using System.Globalization;

namespace IpcBench.Workload.Placement;

/// <summary>
/// This process's cgroup directories, found from /proc/self/cgroup and /proc/self/mountinfo rather than assumed paths,
/// for cgroup v2 (the unified hierarchy) and v1 (one hierarchy per controller) alike, hybrids included.
/// </summary>
public sealed class Cgroups
{
    private readonly IReadOnlyList<string> _cgroupLines;
    private readonly IReadOnlyList<string> _mountLines;

    public Cgroups(IReadOnlyList<string> cgroupLines, IReadOnlyList<string> mountLines)
    {
        _cgroupLines = cgroupLines;
        _mountLines = mountLines;
    }

    public static Cgroups OfThisProcess() => new(SysFiles.ReadLines("/proc/self/cgroup"), SysFiles.ReadLines("/proc/self/mountinfo"));

    /// <summary>The cgroup's effective cpuset and the file it came from; null when no cpuset controller is visible.</summary>
    public (CpuSet Cpus, string Path)? EffectiveCpus()
    {
        foreach (var (directory, file) in new[] { (Directory(null), "cpuset.cpus.effective"), (Directory("cpuset"), "cpuset.effective_cpus") })
        {
            if (directory is not null && SysFiles.ReadCpuList(System.IO.Path.Combine(directory, file)) is { IsEmpty: false } cpus)
            {
                return (cpus, System.IO.Path.Combine(directory, file));
            }
        }

        return null;
    }

    /// <summary>
    /// The tightest CPU bandwidth limit on the way from this cgroup to its hierarchy's root, e.g. "1.50 CPUs (cpu.max
    /// 150000 100000 at /sys/fs/cgroup/x)"; "none" without a limit; <see cref="SysFiles.Unknown"/> when no cpu controller
    /// is visible.
    /// </summary>
    public string CpuQuota()
    {
        (double Cpus, string Where)? tightest = null;
        bool seen = false;
        foreach (var (directory, v2) in new[] { (Directory(null), true), (Directory("cpu"), false) })
        {
            for (var dir = directory; dir is not null; dir = Parent(dir, v2 ? null : "cpu"))
            {
                var quota = v2 ? ReadV2(dir) : ReadV1(dir);
                if (quota is null)
                {
                    continue;
                }

                seen = true;
                if (quota.Value.Cpus is { } cpus && (tightest is null || cpus < tightest.Value.Cpus))
                {
                    tightest = (cpus, quota.Value.Where);
                }
            }

            if (seen)
            {
                break;
            }
        }

        return tightest is { } t
            ? string.Create(CultureInfo.InvariantCulture, $"{t.Cpus:0.00} CPUs ({t.Where})")
            : seen ? "none" : SysFiles.Unknown;
    }

    private static (double? Cpus, string Where)? ReadV2(string dir)
    {
        var path = Path.Combine(dir, "cpu.max");
        var parts = SysFiles.ReadTrimmed(path)?.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (parts is not { Length: 2 })
        {
            return null;
        }

        return parts[0] == "max" || !double.TryParse(parts[0], CultureInfo.InvariantCulture, out double quota)
            || !double.TryParse(parts[1], CultureInfo.InvariantCulture, out double period) || period <= 0
            ? (null, path)
            : (quota / period, $"cpu.max {parts[0]} {parts[1]} at {dir}");
    }

    private static (double? Cpus, string Where)? ReadV1(string dir)
    {
        var quotaText = SysFiles.ReadTrimmed(Path.Combine(dir, "cpu.cfs_quota_us"));
        var periodText = SysFiles.ReadTrimmed(Path.Combine(dir, "cpu.cfs_period_us"));
        if (!long.TryParse(quotaText, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long quota)
            || !long.TryParse(periodText, CultureInfo.InvariantCulture, out long period))
        {
            return null;
        }

        return quota < 0 || period <= 0 ? (null, dir) : ((double)quota / period, $"cpu.cfs_quota_us {quota} / cpu.cfs_period_us {period} at {dir}");
    }

    /// <summary>The directory of this process's cgroup in the hierarchy of <paramref name="controller"/> (null: v2's unified one).</summary>
    public string? Directory(string? controller)
    {
        var mount = Mount(controller);
        var cgroupPath = CgroupPath(controller);
        if (mount is null || cgroupPath is null)
        {
            return null;
        }

        // Inside a container the mount's root is the container's own cgroup, and /proc/self/cgroup may name it in full.
        var (root, mountPoint) = mount.Value;
        var relative = root != "/" && cgroupPath.StartsWith(root, StringComparison.Ordinal) ? cgroupPath[root.Length..] : cgroupPath;
        return Path.Join(mountPoint, relative.TrimStart('/'));
    }

    private string? Parent(string dir, string? controller)
    {
        var mount = Mount(controller);
        if (mount is null || Path.TrimEndingDirectorySeparator(dir) == Path.TrimEndingDirectorySeparator(mount.Value.MountPoint))
        {
            return null;
        }

        return Path.GetDirectoryName(Path.TrimEndingDirectorySeparator(dir));
    }

    private string? CgroupPath(string? controller)
    {
        foreach (var line in _cgroupLines)
        {
            var parts = line.Split(':', 3);
            if (parts.Length != 3)
            {
                continue;
            }

            bool match = controller is null ? parts[0] == "0" && parts[1].Length == 0 : parts[1].Split(',').Contains(controller);
            if (match)
            {
                return parts[2];
            }
        }

        return null;
    }

    private (string Root, string MountPoint)? Mount(string? controller)
    {
        foreach (var line in _mountLines)
        {
            int separator = line.IndexOf(" - ", StringComparison.Ordinal);
            if (separator < 0)
            {
                continue;
            }

            var fields = line[..separator].Split(' ');
            var tail = line[(separator + 3)..].Split(' ');
            if (fields.Length < 5 || tail.Length < 3)
            {
                continue;
            }

            bool match = controller is null
                ? tail[0] == "cgroup2"
                : tail[0] == "cgroup" && tail[2].Split(',').Contains(controller);
            if (match)
            {
                return (Unescape(fields[3]), Unescape(fields[4]));
            }
        }

        return null;
    }

    // mountinfo escapes space, tab, newline and backslash as octal (\040).
    private static string Unescape(string field) => System.Text.RegularExpressions.Regex.Replace(
        field, @"\\([0-7]{3})", m => ((char)Convert.ToInt32(m.Groups[1].Value, 8)).ToString());
}
