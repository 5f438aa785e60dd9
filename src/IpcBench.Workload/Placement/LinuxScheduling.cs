using System.Runtime.InteropServices;

namespace IpcBench.Workload.Placement;

/// <summary>
/// The scheduling calls placement needs. On Linux each of them, given pid 0, acts on the calling thread only: that is
/// how a hot loop pins and raises itself without touching the rest of its process.
/// </summary>
internal static unsafe partial class LinuxScheduling
{
    public const int SchedOther = 0;
    public const int SchedFifo = 1;

    /// <summary>Threads the raised thread creates start as SCHED_OTHER, so a helper thread never inherits a realtime priority.</summary>
    public const int SchedResetOnFork = 0x40000000;

    public const int McCurrent = 1;
    public const int McFuture = 2;

    public const int RlimitMemlock = 8;
    public const int RlimitRtprio = 14;
    public const ulong RlimInfinity = ulong.MaxValue;

    [LibraryImport("libc", EntryPoint = "sched_setaffinity", SetLastError = true)]
    public static partial int SchedSetAffinity(int pid, nint size, ulong* mask);

    [LibraryImport("libc", EntryPoint = "sched_getaffinity", SetLastError = true)]
    public static partial int SchedGetAffinity(int pid, nint size, ulong* mask);

    [LibraryImport("libc", EntryPoint = "sched_setscheduler", SetLastError = true)]
    public static partial int SchedSetScheduler(int pid, int policy, SchedParam* param);

    [LibraryImport("libc", EntryPoint = "sched_getscheduler", SetLastError = true)]
    public static partial int SchedGetScheduler(int pid);

    [LibraryImport("libc", EntryPoint = "mlockall", SetLastError = true)]
    public static partial int MlockAll(int flags);

    [LibraryImport("libc", EntryPoint = "munlockall", SetLastError = true)]
    public static partial int MunlockAll();

    [LibraryImport("libc", EntryPoint = "getrlimit", SetLastError = true)]
    public static partial int GetRlimit(int resource, Rlimit* limit);

    [LibraryImport("libc", EntryPoint = "gettid")]
    public static partial int GetTid();

    /// <summary>"EPERM (Operation not permitted)" for the last failed call of this thread.</summary>
    public static string LastError()
    {
        int errno = Marshal.GetLastPInvokeError();
        return $"errno {errno} ({Marshal.GetPInvokeErrorMessage(errno)})";
    }

    /// <summary>The affinity of <paramref name="pid"/> (a process's main thread, or 0 for the calling thread).</summary>
    public static CpuSet GetAffinity(int pid)
    {
        // The kernel refuses a buffer shorter than its own CPU mask; grow until it fits (8192 CPUs at most).
        for (int words = 16; words <= 128; words *= 2)
        {
            var mask = new ulong[words];
            fixed (ulong* p = mask)
            {
                if (SchedGetAffinity(pid, words * sizeof(ulong), p) == 0)
                {
                    return CpuSet.FromMask(mask);
                }
            }

            if (Marshal.GetLastPInvokeError() != 22)
            {
                break;
            }
        }

        throw new InvalidOperationException($"sched_getaffinity({pid}) failed: {LastError()}");
    }

    public static (ulong Soft, ulong Hard) GetLimit(int resource)
    {
        Rlimit limit;
        return GetRlimit(resource, &limit) == 0 ? (limit.Current, limit.Maximum) : (0, 0);
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct SchedParam
    {
        public int Priority;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Rlimit
    {
        public ulong Current;
        public ulong Maximum;
    }
}
