using System.Runtime.InteropServices;

namespace IpcBench.Workload;

/// <summary>CPU time and peak RSS of the calling process, from getrusage (microsecond CPU resolution, unlike /proc's ticks).</summary>
public static partial class ProcessMetrics
{
    private const int RusageSelf = 0;

    public readonly record struct Sample(double CpuSeconds, ulong PeakRssBytes, long TakenAtNs);

    public static Sample Take()
    {
        if (!OperatingSystem.IsLinux() || GetRusage(RusageSelf, out var usage) != 0)
        {
            using var process = System.Diagnostics.Process.GetCurrentProcess();
            return new Sample(process.TotalProcessorTime.TotalSeconds, (ulong)process.PeakWorkingSet64, MonotonicClock.NowNs());
        }

        double cpu = usage.UserSeconds + usage.UserMicroseconds / 1e6 + usage.SystemSeconds + usage.SystemMicroseconds / 1e6;
        return new Sample(cpu, (ulong)usage.MaxRssKilobytes * 1024, MonotonicClock.NowNs());
    }

    /// <summary>
    /// The peak resident set size since the process started or since <see cref="ResetPeakResident"/> (VmHWM of
    /// /proc/self/status); getrusage's peak elsewhere and when /proc cannot be read.
    /// </summary>
    public static ulong PeakResidentBytes()
    {
        if (OperatingSystem.IsLinux())
        {
            try
            {
                foreach (var line in File.ReadLines("/proc/self/status"))
                {
                    if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
                    {
                        var fields = line.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
                        if (fields.Length >= 2 && ulong.TryParse(fields[1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var kilobytes))
                        {
                            return kilobytes * 1024;
                        }
                    }
                }
            }
            catch (IOException)
            {
            }
        }

        return Take().PeakRssBytes;
    }

    /// <summary>
    /// Starts the peak resident set size over from the current one (writes 5 to /proc/self/clear_refs): a warm agent's
    /// next scenario reports its own peak, not an earlier scenario's. False where the kernel does not allow it.
    /// </summary>
    public static bool ResetPeakResident()
    {
        if (!OperatingSystem.IsLinux())
        {
            return false;
        }

        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <summary>Resident set size now, from /proc/self/statm (pages × page size); the working set elsewhere.</summary>
    public static ulong ResidentBytes()
    {
        if (OperatingSystem.IsLinux())
        {
            try
            {
                // "size resident shared text lib data dt", in pages.
                var fields = File.ReadAllText("/proc/self/statm").Split(' ', 3);
                if (fields.Length >= 2 && ulong.TryParse(fields[1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var pages))
                {
                    return pages * (ulong)Environment.SystemPageSize;
                }
            }
            catch (IOException)
            {
            }
        }

        using var process = System.Diagnostics.Process.GetCurrentProcess();
        return (ulong)process.WorkingSet64;
    }

    /// <summary>
    /// Open file descriptors: the entries of /proc/self/fd, read with readdir(3) (.NET's directory enumeration stats every
    /// entry, which for a few hundred descriptors costs more than everything else a /metrics scrape does). Null elsewhere.
    /// </summary>
    public static int? OpenFileDescriptors() => OpenFileDescriptors("self");

    /// <summary>The same for process <paramref name="pid"/> ("self" for this one); null when it is gone or not readable.</summary>
    public static int? OpenFileDescriptors(string pid)
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }

        nint directory = OpenDir($"/proc/{pid}/fd");
        if (directory == 0)
        {
            return null;
        }

        try
        {
            int entries = 0;
            while (ReadDir(directory) != 0)
            {
                entries++;
            }

            // ".", "..", and (reading our own) the descriptor opendir itself holds.
            return Math.Max(0, entries - (pid == "self" ? 3 : 2));
        }
        finally
        {
            _ = CloseDir(directory);
        }
    }

    /// <summary>CPU % of one core between two samples: 100 means one core busy the whole time.</summary>
    public static double CpuPercent(Sample from, Sample to)
    {
        double wall = (to.TakenAtNs - from.TakenAtNs) / 1e9;
        return wall <= 0 ? 0 : (to.CpuSeconds - from.CpuSeconds) / wall * 100.0;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct Rusage
    {
        public long UserSeconds;
        public long UserMicroseconds;
        public long SystemSeconds;
        public long SystemMicroseconds;
        public long MaxRssKilobytes;
        private readonly long _ixrss;
        private readonly long _idrss;
        private readonly long _isrss;
        private readonly long _minflt;
        private readonly long _majflt;
        private readonly long _nswap;
        private readonly long _inblock;
        private readonly long _oublock;
        private readonly long _msgsnd;
        private readonly long _msgrcv;
        private readonly long _nsignals;
        private readonly long _nvcsw;
        private readonly long _nivcsw;
    }

    [LibraryImport("libc", EntryPoint = "opendir", StringMarshalling = StringMarshalling.Utf8)]
    private static partial nint OpenDir(string path);

    [LibraryImport("libc", EntryPoint = "readdir")]
    private static partial nint ReadDir(nint directory);

    [LibraryImport("libc", EntryPoint = "closedir")]
    private static partial int CloseDir(nint directory);

    [LibraryImport("libc", EntryPoint = "getrusage", SetLastError = true)]
    private static partial int GetRusage(int who, out Rusage usage);
}
