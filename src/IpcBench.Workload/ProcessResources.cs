using System.Globalization;

namespace IpcBench.Workload;

/// <summary>
/// What a process holds that a leak makes grow, read from outside it through /proc: resident memory, the part of it that
/// is shared memory (tmpfs and shared mappings: /dev/shm segments), threads and open descriptors. Any process of the same
/// user can be read, so the daemon reads its agents without asking them.
/// </summary>
public readonly record struct ProcessResources(long RssBytes, long SharedMemoryBytes, int Threads, int Descriptors)
{
    /// <summary>Process <paramref name="pid"/>'s resources now; null when it has exited or /proc cannot be read.</summary>
    public static ProcessResources? Read(int pid)
    {
        if (!OperatingSystem.IsLinux() || pid <= 0)
        {
            return null;
        }

        string id = pid.ToString(CultureInfo.InvariantCulture);
        long rss = -1, shared = -1;
        int threads = -1;
        try
        {
            foreach (var line in File.ReadLines($"/proc/{id}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    rss = Kilobytes(line) * 1024;
                }
                else if (line.StartsWith("RssShmem:", StringComparison.Ordinal))
                {
                    shared = Kilobytes(line) * 1024;
                }
                else if (line.StartsWith("Threads:", StringComparison.Ordinal))
                {
                    threads = (int)Kilobytes(line);
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        return rss < 0 || threads < 0 || ProcessMetrics.OpenFileDescriptors(id) is not { } descriptors
            ? null
            : new ProcessResources(rss, Math.Max(0, shared), threads, descriptors);
    }

    /// <summary>The number of a "Name:   123 kB" or "Name:   12" line of /proc/PID/status.</summary>
    private static long Kilobytes(string line)
    {
        var fields = line.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        return fields.Length >= 2 && long.TryParse(fields[1], NumberStyles.None, CultureInfo.InvariantCulture, out var value) ? value : -1;
    }
}
