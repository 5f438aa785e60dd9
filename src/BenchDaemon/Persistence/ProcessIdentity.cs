using System.Globalization;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// "pid:start-ticks" of a process: who owns an unfinished scenario row. The start time (field 22 of /proc/PID/stat)
/// tells a live owner from an unrelated process that has since been given the same pid.
/// </summary>
public static class ProcessIdentity
{
    public static readonly string Current = Of(Environment.ProcessId) ?? $"{Environment.ProcessId}:0";

    public static string? Of(int pid) => StartTicks(pid) is { } ticks ? $"{pid}:{ticks.ToString(CultureInfo.InvariantCulture)}" : null;

    /// <summary>True while the process <paramref name="owner"/> names still runs (zombies count as gone).</summary>
    public static bool IsAlive(string owner)
    {
        var parts = owner.Split(':');
        return parts.Length == 2 && int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
            && Of(pid) == owner && State(pid) is not ('Z' or 'X' or null);
    }

    private static ulong? StartTicks(int pid) =>
        StatFields(pid) is { Length: > 19 } fields && ulong.TryParse(fields[19], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks) ? ticks : null;

    private static char? State(int pid) => StatFields(pid) is { Length: > 0 } fields && fields[0].Length > 0 ? fields[0][0] : null;

    /// <summary>The fields after "pid (comm) ": the command may itself contain spaces and parentheses.</summary>
    private static string[]? StatFields(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            int close = stat.LastIndexOf(')');
            return close < 0 || close + 2 > stat.Length ? null : stat[(close + 2)..].Split(' ');
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
