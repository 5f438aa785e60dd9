using System.Globalization;
using System.Runtime.InteropServices;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>One entry of /proc. <see cref="StartTicks"/> tells a process from a later one that reused its pid.</summary>
internal sealed record ProcessEntry(int Pid, int ParentPid, char State, ulong StartTicks, string Command, string CommandLine)
{
    public bool IsAgent => Command.StartsWith("BenchAgent", StringComparison.Ordinal) || CommandLine.Contains("BenchAgent", StringComparison.Ordinal);

    /// <summary>Still this process, and not a zombie waiting to be reaped.</summary>
    public bool IsAlive => ProcessTree.Read(Pid) is { } now && now.StartTicks == StartTicks && now.State is not ('Z' or 'X');

    public override string ToString() => $"{Pid} (ppid {ParentPid}, state {State}) {CommandLine}";
}

/// <summary>Parent/child relations read from /proc/*/stat, and kill(2).</summary>
internal static partial class ProcessTree
{
    public const int SigInt = 2;
    public const int SigKill = 9;
    public const int SigTerm = 15;
    public const int SigCont = 18;
    public const int SigStop = 19;

    public static ProcessEntry? Read(int pid)
    {
        string stat;
        string commandLine;
        try
        {
            stat = File.ReadAllText($"/proc/{pid}/stat");
            commandLine = File.ReadAllText($"/proc/{pid}/cmdline").Replace('\0', ' ').Trim();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        // pid (comm) state ppid ... field 22 is starttime; comm may itself contain spaces and parentheses.
        int open = stat.IndexOf('(');
        int close = stat.LastIndexOf(')');
        if (open < 0 || close < open)
        {
            return null;
        }

        var fields = stat[(close + 2)..].Split(' ');
        return new ProcessEntry(
            pid,
            int.Parse(fields[1], CultureInfo.InvariantCulture),
            fields[0][0],
            ulong.Parse(fields[19], CultureInfo.InvariantCulture),
            stat[(open + 1)..close],
            commandLine);
    }

    public static IReadOnlyList<ProcessEntry> All()
    {
        var entries = new List<ProcessEntry>();
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (int.TryParse(Path.GetFileName(directory), NumberStyles.None, CultureInfo.InvariantCulture, out var pid) && Read(pid) is { } entry)
            {
                entries.Add(entry);
            }
        }

        return entries;
    }

    /// <summary>Live (non-zombie) direct children of <paramref name="pid"/>.</summary>
    public static IReadOnlyList<ProcessEntry> Children(int pid) =>
        [.. All().Where(p => p.ParentPid == pid && p.State is not ('Z' or 'X'))];

    /// <summary>Live descendants of <paramref name="pid"/>, children before grandchildren.</summary>
    public static IReadOnlyList<ProcessEntry> Descendants(int pid)
    {
        var all = All();
        var found = new List<ProcessEntry>();
        var parents = new Queue<int>([pid]);
        while (parents.TryDequeue(out var parent))
        {
            foreach (var child in all.Where(p => p.ParentPid == parent && p.State is not ('Z' or 'X')))
            {
                found.Add(child);
                parents.Enqueue(child.Pid);
            }
        }

        return found;
    }

    public static void Signal(int pid, int signal)
    {
        if (Kill(pid, signal) != 0)
        {
            throw new InvalidOperationException($"kill({pid}, {signal}) failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    /// <summary>Sends <paramref name="signal"/> unless the process is gone or its pid now belongs to another process.</summary>
    public static void SignalIfAlive(ProcessEntry process, int signal)
    {
        if (process.IsAlive)
        {
            _ = Kill(process.Pid, signal);
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
