using System.Globalization;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>A process's threads as /proc shows them: found by name (comm), with their allowed CPUs and scheduling.</summary>
internal static class ProcThreads
{
    /// <summary>The thread ids of <paramref name="pid"/> named <paramref name="name"/> (a managed Thread.Name, as the runtime hands it to the kernel).</summary>
    public static IReadOnlyList<int> Named(int pid, string name) =>
        [.. Directory.EnumerateDirectories($"/proc/{pid}/task")
            .Select(dir => (Tid: int.Parse(Path.GetFileName(dir), CultureInfo.InvariantCulture), Comm: TryRead(Path.Combine(dir, "comm"))?.Trim()))
            .Where(t => t.Comm == name)
            .Select(t => t.Tid)];

    /// <summary>Waits until exactly one thread of that name is running, and returns its id.</summary>
    public static async Task<int> WaitForAsync(int pid, string name, TimeSpan timeout)
    {
        var until = DateTime.UtcNow + timeout;
        while (true)
        {
            var tids = Named(pid, name);
            if (tids.Count == 1)
            {
                return tids[0];
            }

            if (DateTime.UtcNow > until)
            {
                throw new TimeoutException($"process {pid} has {tids.Count} threads named '{name}' after {timeout.TotalSeconds:0} s");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>
    /// What <paramref name="read"/> says of the thread named <paramref name="name"/> once it says <paramref name="expected"/>,
    /// or what it last said when <paramref name="timeout"/> runs out: a thread applies its placement just after it starts,
    /// so a first read can precede it.
    /// </summary>
    public static async Task<T> ObserveAsync<T>(int pid, string name, Func<int, T> read, T expected, TimeSpan timeout)
    {
        var until = DateTime.UtcNow + timeout;
        int tid = await WaitForAsync(pid, name, timeout);
        while (true)
        {
            var value = read(tid);
            if (EqualityComparer<T>.Default.Equals(value, expected) || DateTime.UtcNow > until)
            {
                return value;
            }

            await Task.Delay(20);
        }
    }

    public static string? StatusField(int pid, int? tid, string field)
    {
        var path = tid is null ? $"/proc/{pid}/status" : $"/proc/{pid}/task/{tid}/status";
        return File.ReadLines(path).FirstOrDefault(l => l.StartsWith(field + ":", StringComparison.Ordinal))?[(field.Length + 1)..].Trim();
    }

    /// <summary>rt_priority (field 40) and policy (field 41, 1 = SCHED_FIFO) from /proc/pid/task/tid/stat.</summary>
    public static (int RtPriority, int Policy) Scheduling(int pid, int tid)
    {
        var stat = File.ReadAllText($"/proc/{pid}/task/{tid}/stat");
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return (int.Parse(fields[37], CultureInfo.InvariantCulture), int.Parse(fields[38], CultureInfo.InvariantCulture));
    }

    /// <summary>VmLck in kB.</summary>
    public static long LockedKb(int pid) => long.Parse(StatusField(pid, null, "VmLck")!.Split(' ')[0], CultureInfo.InvariantCulture);

    private static string? TryRead(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (IOException)
        {
            return null;
        }
    }
}
