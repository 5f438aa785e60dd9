namespace IpcBench.Workload.Placement;

/// <summary>
/// mlockall(MCL_CURRENT | MCL_FUTURE) for as long as some scenario asks for it: every page mapped now and later stays
/// resident, so a hot loop never takes a major fault. Locking is per process, so the daemon counts the scenarios that
/// hold it and unlocks when the last one ends; an agent locks once and exits.
/// </summary>
public static class MemoryLock
{
    private static readonly object Gate = new();
    private static int _holders;

    /// <summary>Locks (or counts one more holder of) this process's memory; dispose to release.</summary>
    /// <exception cref="PlacementException">mlockall failed.</exception>
    public static IDisposable Acquire()
    {
        lock (Gate)
        {
            if (_holders == 0 && LinuxScheduling.MlockAll(LinuxScheduling.McCurrent | LinuxScheduling.McFuture) != 0)
            {
                throw new PlacementException($"could not lock memory: mlockall(MCL_CURRENT | MCL_FUTURE) failed with {LinuxScheduling.LastError()}");
            }

            _holders++;
            return new Holder();
        }
    }

    /// <summary>VmLck of this process from /proc/self/status, in bytes; null when unreadable.</summary>
    public static long? LockedBytes(int pid = 0)
    {
        foreach (var line in SysFiles.ReadLines(pid == 0 ? "/proc/self/status" : $"/proc/{pid}/status"))
        {
            if (line.StartsWith("VmLck:", StringComparison.Ordinal)
                && long.TryParse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), out long kb))
            {
                return kb * 1024;
            }
        }

        return null;
    }

    private static void Release()
    {
        lock (Gate)
        {
            if (--_holders == 0)
            {
                LinuxScheduling.MunlockAll();
            }
        }
    }

    private sealed class Holder : IDisposable
    {
        private int _released;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _released, 1) == 0)
            {
                Release();
            }
        }
    }
}
