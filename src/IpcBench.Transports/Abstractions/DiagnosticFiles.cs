using System.Globalization;

namespace IpcBench.Transports;

/// <summary>
/// The .NET runtime's per-process diagnostic files in the temporary directory (TMPDIR, as the runtime reads it): the
/// debugger's pipes <c>clr-debug-pipe-PID-*</c> and the diagnostic socket <c>dotnet-diagnostic-PID-*</c> that dotnet-trace
/// and dotnet-counters connect to. A process removes its own when it exits in order; one that is killed, or ends by
/// _exit, leaves them forever. So the daemon removes those of its agents once it has reaped them and, at start, those of
/// every dead process; an agent whose daemon died removes its own before it ends. Files named for a pid that some
/// process runs under (by <see cref="ProcessInstance.IsRunning"/>) are never touched, except a process's own.
/// </summary>
public static class DiagnosticFiles
{
    private static readonly string[] Prefixes = ["clr-debug-pipe-", "dotnet-diagnostic-"];

    /// <summary>Removes this process's own files: for a process about to end without the runtime's orderly shutdown.</summary>
    public static int RemoveOwn() => RemoveNamedFor(Environment.ProcessId);

    /// <summary>Removes the files of <paramref name="pid"/>, unless a process runs under it (again); returns how many.</summary>
    public static int RemoveOf(int pid) => ProcessInstance.IsRunning(pid) ? 0 : RemoveNamedFor(pid);

    /// <summary>Removes the files of every pid no process runs under; returns how many.</summary>
    public static int RemoveOfDeadProcesses()
    {
        int removed = 0;
        foreach (var prefix in Prefixes)
        {
            foreach (var file in Find(prefix + "*"))
            {
                var pidText = Path.GetFileName(file.AsSpan())[prefix.Length..];
                int dash = pidText.IndexOf('-');
                if (dash > 0 && int.TryParse(pidText[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
                    && pid != Environment.ProcessId && !ProcessInstance.IsRunning(pid) && TryDelete(file))
                {
                    removed++;
                }
            }
        }

        return removed;
    }

    private static int RemoveNamedFor(int pid)
    {
        int removed = 0;
        foreach (var prefix in Prefixes)
        {
            foreach (var file in Find(prefix + pid.ToString(CultureInfo.InvariantCulture) + "-*"))
            {
                removed += TryDelete(file) ? 1 : 0;
            }
        }

        return removed;
    }

    private static string[] Find(string pattern)
    {
        try
        {
            return Directory.GetFiles(Path.GetTempPath(), pattern);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    private static bool TryDelete(string file)
    {
        try
        {
            File.Delete(file);
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Another user's (the temporary directory is shared and sticky), or removed meanwhile.
            return false;
        }
    }
}
