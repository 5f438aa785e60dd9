using System.Globalization;
using System.Runtime.InteropServices;

namespace IpcBench.Transports;

/// <summary>
/// One process: its pid and its start time (field 22 of /proc/PID/stat, clock ticks since boot), which tells it from a
/// later process given the same pid. The one liveness check of daemon, agents and transports: a zombie (state Z) or a
/// dying process (X) counts as dead, as does a pid now held by a process that started at another time.
/// </summary>
/// <remarks>
/// Reads /proc with open/read/close into a stack buffer, so a check allocates nothing and costs a few microseconds:
/// shm-ring calls it every 100 ms while it waits. A process whose /proc entry we may not read (another user's, under
/// hidepid) but that kill(pid, 0) finds counts as running: resources are only ever removed for certainly dead ones.
/// </remarks>
public readonly partial record struct ProcessInstance(int Pid, ulong StartTicks)
{
    private const int StatBufferBytes = 512;
    private const int OpenReadOnlyCloseOnExec = 0x80000; // O_RDONLY | O_CLOEXEC
    private const int StartTimeField = 22;
    private const int NoSuchProcess = 3; // ESRCH

    /// <summary>This process.</summary>
    public static ProcessInstance Current { get; } = Of(Environment.ProcessId) ?? new(Environment.ProcessId, 0);

    /// <summary>The process now running under <paramref name="pid"/>; null when there is none, or only a zombie.</summary>
    public static ProcessInstance? Of(int pid) =>
        Read(pid, out var state, out var startTicks) && startTicks.HasValue && !IsDeadState(state) ? new ProcessInstance(pid, startTicks.Value) : null;

    /// <summary>True while this very process runs: same pid, same start time, not a zombie.</summary>
    public bool IsAlive => Read(Pid, out var state, out var startTicks) && startTicks == StartTicks && !IsDeadState(state);

    /// <summary>
    /// True while some process that is not a zombie runs under <paramref name="pid"/>, for owners known by pid alone
    /// (file names, shared-memory headers). A reused pid reads as alive: callers only keep what they would have removed.
    /// </summary>
    public static bool IsRunning(int pid) => Read(pid, out var state, out _) && !IsDeadState(state);

    /// <summary>"pid:start-ticks".</summary>
    public override string ToString() => $"{Pid}:{StartTicks.ToString(CultureInfo.InvariantCulture)}";

    public static bool TryParse(string text, out ProcessInstance instance)
    {
        var parts = text.Split(':');
        if (parts.Length == 2
            && int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
            && ulong.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks))
        {
            instance = new ProcessInstance(pid, ticks);
            return true;
        }

        instance = default;
        return false;
    }

    private static bool IsDeadState(char state) => state is 'Z' or 'X';

    /// <summary>
    /// False when no process has <paramref name="pid"/>. Otherwise its state and start time, or ('?', null) when it
    /// exists but its /proc entry cannot be read.
    /// </summary>
    private static unsafe bool Read(int pid, out char state, out ulong? startTicks)
    {
        state = '?';
        startTicks = null;
        if (pid <= 0)
        {
            return false;
        }

        byte* path = stackalloc byte[32];
        var written = 0;
        var pathSpan = new Span<byte>(path, 31);
        if (!"/proc/"u8.TryCopyTo(pathSpan)
            || !pid.TryFormat(pathSpan[6..], out written, default, CultureInfo.InvariantCulture)
            || !"/stat"u8.TryCopyTo(pathSpan[(6 + written)..]))
        {
            return false;
        }

        path[6 + written + 5] = 0;
        byte* buffer = stackalloc byte[StatBufferBytes];
        int length = -1;
        int fd = Open(path, OpenReadOnlyCloseOnExec);
        if (fd >= 0)
        {
            length = (int)ReadFile(fd, buffer, StatBufferBytes);
            _ = Close(fd);
        }

        if (length <= 0)
        {
            // No /proc entry we can read: a process we may not look at still answers kill(pid, 0) with EPERM.
            return Kill(pid, 0) == 0 || Marshal.GetLastPInvokeError() != NoSuchProcess;
        }

        // "pid (comm) S ppid ...": comm may itself hold spaces and parentheses, so fields count from the last ')'.
        var stat = new ReadOnlySpan<byte>(buffer, length);
        int close = stat.LastIndexOf((byte)')');
        if (close < 0 || close + 2 >= stat.Length)
        {
            return true;
        }

        var rest = stat[(close + 2)..];
        state = (char)rest[0];
        for (int field = 3; field < StartTimeField; field++)
        {
            int space = rest.IndexOf((byte)' ');
            if (space < 0)
            {
                return true;
            }

            rest = rest[(space + 1)..];
        }

        int end = rest.IndexOfAny((byte)' ', (byte)'\n');
        if (ulong.TryParse(end < 0 ? rest : rest[..end], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks))
        {
            startTicks = ticks;
        }

        return true;
    }

    // open(2) is variadic in C; without O_CREAT its mode argument is neither passed nor read.
    [LibraryImport("libc", EntryPoint = "open")]
    private static unsafe partial int Open(byte* path, int flags);

    [LibraryImport("libc", EntryPoint = "read")]
    private static unsafe partial nint ReadFile(int fd, byte* buffer, nint count);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
