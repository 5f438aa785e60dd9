using System.Globalization;

namespace IpcBench.Workload.Placement;

/// <summary>
/// One reading of how busy the machine is: the CPU time of all CPUs (/proc/stat), of our own processes (each pid's
/// /proc/&lt;pid&gt;/stat utime + stime) and the load average. Two readings give the others' share of the machine between
/// them (<see cref="NoisePercentSince"/>). All in clock ticks (USER_HZ), both sides alike.
/// </summary>
public sealed record NoiseSample(long TotalTicks, long BusyTicks, IReadOnlyDictionary<int, long> OwnTicksByPid,
    double LoadAverage1m, long TakenAtNs)
{
    /// <summary>All CPUs' steal ticks: time the hypervisor ran something else on a vCPU that wanted to run (part of <see cref="BusyTicks"/>).</summary>
    public long StealTicks { get; init; }

    /// <summary>Reads the machine and the CPU of <paramref name="ownPids"/> (the daemon and its agents); a pid that is gone is left out.</summary>
    public static NoiseSample Take(IEnumerable<int> ownPids, string procRoot = "/proc")
    {
        ArgumentNullException.ThrowIfNull(ownPids);
        var (total, busy, steal) = ReadMachine(Path.Combine(procRoot, "stat"));
        var own = new Dictionary<int, long>();
        foreach (int pid in ownPids.Distinct())
        {
            if (ReadProcessTicks(Path.Combine(procRoot, pid.ToString(CultureInfo.InvariantCulture), "stat")) is { } ticks)
            {
                own[pid] = ticks;
            }
        }

        var load = SysFiles.ReadTrimmed(Path.Combine(procRoot, "loadavg"))?.Split(' ');
        double load1 = load is { Length: > 0 } && double.TryParse(load[0], CultureInfo.InvariantCulture, out double l) ? l : double.NaN;
        return new NoiseSample(total, busy, own, load1, MonotonicClock.NowNs()) { StealTicks = steal };
    }

    /// <summary>
    /// The CPU that processes other than ours used since <paramref name="earlier"/>, as a share of the whole machine
    /// (100 = every CPU busy with others all the time). Only pids present in both readings count as ours: an agent that
    /// exited in between takes its CPU with it, and one that started brings no earlier figure. Null when no time passed.
    /// </summary>
    public double? NoisePercentSince(NoiseSample earlier)
    {
        ArgumentNullException.ThrowIfNull(earlier);
        long total = TotalTicks - earlier.TotalTicks;
        if (total <= 0)
        {
            return null;
        }

        long own = OwnTicksByPid.Where(p => earlier.OwnTicksByPid.ContainsKey(p.Key)).Sum(p => p.Value - earlier.OwnTicksByPid[p.Key]);
        long others = BusyTicks - earlier.BusyTicks - own;
        return Math.Clamp(100.0 * others / total, 0, 100);
    }

    /// <summary>
    /// The part of <see cref="NoisePercentSince"/> that was steal: the hypervisor running something else on our vCPUs
    /// (another guest, or the host's own work such as moving a vCPU), not a process of this machine. Null when no time passed.
    /// </summary>
    public double? StealPercentSince(NoiseSample earlier)
    {
        ArgumentNullException.ThrowIfNull(earlier);
        long total = TotalTicks - earlier.TotalTicks;
        return total <= 0 ? null : Math.Clamp(100.0 * (StealTicks - earlier.StealTicks) / total, 0, 100);
    }

    /// <summary>All CPUs' ticks, the busy ones (everything but idle and iowait) and the stolen ones. Steal (a hypervisor's other guests) counts as busy, as noise.</summary>
    private static (long Total, long Busy, long Steal) ReadMachine(string path)
    {
        foreach (var line in SysFiles.ReadLines(path))
        {
            if (!line.StartsWith("cpu ", StringComparison.Ordinal))
            {
                continue;
            }

            // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already inside user.
            var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries).Skip(1).Take(8)
                .Select(f => long.TryParse(f, CultureInfo.InvariantCulture, out long v) ? v : 0).ToArray();
            long total = fields.Sum();
            long idle = fields.ElementAtOrDefault(3) + fields.ElementAtOrDefault(4);
            return (total, total - idle, fields.ElementAtOrDefault(7));
        }

        return (0, 0, 0);
    }

    /// <summary>utime + stime (fields 14 and 15) of /proc/&lt;pid&gt;/stat; the command name may hold spaces, so count after its ')'.</summary>
    internal static long? ReadProcessTicks(string path) =>
        SysFiles.ReadTrimmed(path) is { } text ? ProcStat.Field(text, 14) + ProcStat.Field(text, 15) : null;
}
