using System.Globalization;
using IpcBench.Workload;

namespace IpcBench.Daemon.Observability;

/// <summary>What /proc says about the daemon that neither .NET nor ProcessMetrics reads cheaply; null where it does not say.</summary>
internal static class ProcFs
{
    public static double? VirtualMemoryBytes()
    {
        try
        {
            // "size resident shared text lib data dt", in pages.
            var fields = File.ReadAllText("/proc/self/statm").Split(' ', 2);
            return ulong.TryParse(fields[0], NumberStyles.None, CultureInfo.InvariantCulture, out var pages) ? pages * (double)Environment.SystemPageSize : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    public static double? Threads()
    {
        try
        {
            // num_threads is field 20.
            return ProcStat.Field(File.ReadAllText("/proc/self/stat"), 20);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    public static double? MaxOpenFiles()
    {
        try
        {
            foreach (var line in File.ReadLines("/proc/self/limits"))
            {
                if (line.StartsWith("Max open files", StringComparison.Ordinal))
                {
                    var fields = line["Max open files".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return fields.Length > 0 && long.TryParse(fields[0], NumberStyles.None, CultureInfo.InvariantCulture, out var soft) ? soft : null;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }

        return null;
    }
}
