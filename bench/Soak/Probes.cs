using System.Globalization;

namespace IpcBench.Soak;

/// <summary>What the soak reads about processes and the machine from /proc, /dev/shm and the daemon's /metrics.</summary>
internal static class Probes
{
    public const string SharedMemoryDirectory = "/dev/shm";

    /// <summary>VmRSS of a process in bytes; 0 when it is gone.</summary>
    public static long ResidentBytes(int pid)
    {
        try
        {
            foreach (var line in File.ReadLines($"/proc/{pid}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    var kib = line["VmRSS:".Length..].Trim().Split(' ')[0];
                    return long.Parse(kib, CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }

        return 0;
    }

    /// <summary>
    /// Open file descriptors of a process, less the assemblies the runtime has mapped (0 when it is gone). The runtime
    /// loads an assembly on first use and keeps its file open for good (e.g. System.IO.dll, twice, the first time a code
    /// path reaches it mid-soak): a bounded, one-time cost, not the sockets, pipes and shared memory a leak leaves. Less
    /// too the runtime's diagnostics IPC sockets: the soak's own live-heap readings connect there, and the process closes
    /// its end a moment after the reading has ended (seen: an agent at 101 for 100 right after one). Less the daemon's
    /// database files (<see cref="DatabaseFile"/> and its -wal and -shm): Microsoft.Data.Sqlite keeps every connection
    /// open in its pool for reuse, and a read that meets the writer opens a second one (seen: 35 → 37, the new two
    /// scenarios.db and scenarios.db-wal) — bounded by concurrent use, not a leak; the daemon's own soak judgement
    /// watches its descriptors over time.
    /// </summary>
    /// <summary>The file name of the database the soak's daemon is given (SoakSession).</summary>
    public const string DatabaseFile = "scenarios.db";

    public static int OpenDescriptors(int pid) => OpenDescriptorTargets(pid).Count;

    /// <summary>What each descriptor <see cref="OpenDescriptors"/> counts points at ("socket:[123]", a path): a failed check names the new ones.</summary>
    public static IReadOnlyList<string> OpenDescriptorTargets(int pid)
    {
        try
        {
            var diagnostics = DiagnosticSockets();
            var targets = new List<string>();
            foreach (var fd in Directory.EnumerateFileSystemEntries($"/proc/{pid}/fd"))
            {
                var target = new FileInfo(fd).LinkTarget;
                if (target is null || !(target.EndsWith(".dll", StringComparison.Ordinal) || diagnostics.Contains(target)
                    || Path.GetFileName(target).StartsWith(DatabaseFile, StringComparison.Ordinal)))
                {
                    targets.Add(target ?? "?");
                }
            }

            return targets;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    /// <summary>
    /// "socket:[inode]" of every Unix socket on the runtime's diagnostics IPC path (dotnet-diagnostic-PID-...-socket):
    /// /proc/net/unix shows a connection accepted on it with the listener's path.
    /// </summary>
    private static HashSet<string> DiagnosticSockets()
    {
        var sockets = new HashSet<string>(StringComparer.Ordinal);
        foreach (var line in File.ReadLines("/proc/net/unix").Skip(1))
        {
            var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (fields.Length >= 8 && fields[7].Contains("/dotnet-diagnostic-", StringComparison.Ordinal))
            {
                sockets.Add($"socket:[{fields[6]}]");
            }
        }

        return sockets;
    }

    /// <summary>Bytes in use on the shared-memory file system (what every tmpfs file there holds).</summary>
    public static long SharedMemoryUsedBytes()
    {
        var drive = new DriveInfo(SharedMemoryDirectory);
        return drive.TotalSize - drive.TotalFreeSpace;
    }

    /// <summary>Ring files a given daemon owns in /dev/shm (shm-ring names them by the daemon's pid).</summary>
    public static int RingFilesOf(int daemonPid) =>
        Directory.GetFiles(SharedMemoryDirectory, string.Create(CultureInfo.InvariantCulture, $"ipcbench.ring.{daemonPid}.*")).Length;

    /// <summary>
    /// Sum of a metric's samples in Prometheus text format, over the series whose labels contain every one of
    /// <paramref name="labels"/> (e.g. scenario="abc").
    /// </summary>
    public static double Sum(string metricsText, string metric, params string[] labels)
    {
        double sum = 0;
        foreach (var raw in metricsText.AsSpan().EnumerateLines())
        {
            var line = raw.ToString();
            if (!line.StartsWith(metric, StringComparison.Ordinal) || line.Length <= metric.Length || line[metric.Length] is not ('{' or ' '))
            {
                continue;
            }

            if (labels.Any(l => !line.Contains(l, StringComparison.Ordinal)))
            {
                continue;
            }

            int space = line.LastIndexOf(' ');
            if (double.TryParse(line.AsSpan(space + 1), NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
            {
                sum += value;
            }
        }

        return sum;
    }
}
