using System.Globalization;

namespace IpcBench.Daemon.Agents;

/// <summary>What /proc shows of an idle agent: what a scenario could leave behind in it.</summary>
/// <param name="Descriptors">Open descriptors other than loaded assemblies and native libraries.</param>
/// <param name="SharedMappings">
/// Shared mappings (a transport's segments: shm-ring's ring, iceoryx2's data segments) other than code: assemblies,
/// native libraries and the runtime's double-mapped JIT code (memfd:doublemapper), which grows with every method compiled.
/// </param>
/// <param name="ReceivingThreads">Threads named subN-rxM (SubscriberHost's receivers) still running.</param>
/// <param name="LiveHeapBytes">The managed heap after the full collection the agent makes before its final report.</param>
internal readonly record struct IdleReading(int Descriptors, int SharedMappings, int ReceivingThreads, long LiveHeapBytes)
{
    private const string RuntimeCode = "/memfd:doublemapper";

    /// <summary>
    /// How far the live heap may exceed the agent's earlier readings: what a collection leaves of a scenario's own
    /// allocations varies by a few MiB, which a leak of every scenario outgrows within a few scenarios.
    /// </summary>
    public const long HeapSlackBytes = 4 << 20;

    public static IdleReading? Of(int pid, long liveHeapBytes)
    {
        string proc = $"/proc/{pid.ToString(CultureInfo.InvariantCulture)}";
        int descriptors = 0, receiving = 0, shared = 0;
        try
        {
            // Assemblies and native libraries stay open once loaded (a transport's first scenario loads its own): what
            // counts is the rest, the sockets, pipes, event and shared-memory descriptors a scenario opens.
            foreach (var fd in Directory.EnumerateFileSystemEntries($"{proc}/fd"))
            {
                string? target = new FileInfo(fd).LinkTarget;
                if (target is null || !IsCode(target))
                {
                    descriptors++;
                }
            }

            // Receiving threads are named subN-rxM (SubscriberHost); the kernel keeps the first 15 characters.
            foreach (var task in Directory.EnumerateDirectories($"{proc}/task"))
            {
                string name = File.ReadAllText(Path.Combine(task, "comm")).Trim();
                if (name.StartsWith("sub", StringComparison.Ordinal) && name.Contains("-rx", StringComparison.Ordinal))
                {
                    receiving++;
                }
            }

            // "address perms offset dev inode path": perms rw-s is a shared mapping.
            foreach (var line in File.ReadLines($"{proc}/maps"))
            {
                var fields = line.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries);
                if (fields.Length >= 2 && fields[1].Length == 4 && fields[1][3] == 's'
                    && !(fields.Length == 6 && (fields[5].StartsWith(RuntimeCode, StringComparison.Ordinal) || IsCode(fields[5]))))
                {
                    shared++;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        return new IdleReading(descriptors, shared, receiving, liveHeapBytes);
    }

    /// <summary>An assembly or a native library: loaded once, kept open and mapped for the process's life.</summary>
    private static bool IsCode(string path) => path.EndsWith(".dll", StringComparison.Ordinal) || path.Contains(".so", StringComparison.Ordinal);

    public static IdleReading Max(IdleReading a, IdleReading b) =>
        new(Math.Max(a.Descriptors, b.Descriptors), Math.Max(a.SharedMappings, b.SharedMappings), 0, Math.Max(a.LiveHeapBytes, b.LiveHeapBytes));

    /// <summary>Why this reading shows something left behind against <paramref name="baseline"/>; null when it does not.</summary>
    public string? LeftOver(IdleReading baseline, bool compareHeap) =>
        ReceivingThreads > 0 ? $"{ReceivingThreads} receiving thread(s) still running"
        : Descriptors > baseline.Descriptors ? $"{Descriptors} open descriptors against {baseline.Descriptors} after its earlier scenarios"
        : SharedMappings > baseline.SharedMappings ? $"{SharedMappings} shared mappings against {baseline.SharedMappings} after its earlier scenarios"
        : compareHeap && LiveHeapBytes > baseline.LiveHeapBytes + HeapSlackBytes
            ? $"a live heap of {LiveHeapBytes / 1048576.0:0.0} MiB against {baseline.LiveHeapBytes / 1048576.0:0.0} MiB after its earlier scenarios"
        : null;
}
