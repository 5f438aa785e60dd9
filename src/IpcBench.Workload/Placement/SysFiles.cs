namespace IpcBench.Workload.Placement;

/// <summary>
/// Reads of /sys and /proc files that may be missing (no cpufreq in a VM, cgroup v1 or v2, an older kernel): a missing
/// or unreadable file is null or empty, never an exception.
/// </summary>
public static class SysFiles
{
    public const string Unknown = "unknown";

    public static string? ReadTrimmed(string path)
    {
        try
        {
            return File.ReadAllText(path).Trim();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    public static IReadOnlyList<string> ReadLines(string path)
    {
        try
        {
            return File.ReadAllLines(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    /// <summary>A CPU list file (online, isolated, shared_cpu_list ...); null when missing or not a CPU list.</summary>
    public static CpuSet? ReadCpuList(string path) =>
        ReadTrimmed(path) is { } text && CpuSet.TryParse(text, out var cpus) ? cpus : null;
}
