using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace IpcBench.Transports.SharedMemory;

/// <summary>The three system calls the ring needs: futex wait and wake on shared memory, and kill(pid, 0).</summary>
[SupportedOSPlatform("linux")]
internal static unsafe partial class LinuxNative
{
    // Not the *_PRIVATE variants: the futex word lives in a file mapping shared between processes, so the kernel must
    // key waiters by (inode, offset), not by this process's address space.
    private const int FutexWaitOperation = 0;
    private const int FutexWakeOperation = 1;
    private const int NoSuchProcess = 3; // ESRCH

    private static readonly long SysFutex = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 => 202,
        Architecture.Arm64 => 98,
        _ => -1,
    };

    public static bool FutexSupported => SysFutex > 0;

    /// <summary>Sleeps while <c>*address == expected</c>, at most <paramref name="timeoutMs"/>. Spurious returns are the caller's to re-check.</summary>
    public static void FutexWait(int* address, int expected, int timeoutMs)
    {
        var timeout = new Timespec { Seconds = timeoutMs / 1000, Nanoseconds = timeoutMs % 1000 * 1_000_000L };
        Syscall(SysFutex, address, FutexWaitOperation, expected, &timeout, null, 0);
    }

    public static void FutexWake(int* address, int count) => Syscall(SysFutex, address, FutexWakeOperation, count, null, null, 0);

    /// <summary>
    /// False only when the process certainly no longer runs: kill(pid, 0) fails with ESRCH, or (with
    /// <paramref name="checkZombie"/>) it is a zombie nobody has reaped yet. A pid of 0 (unknown) counts as alive.
    /// The zombie check reads /proc and allocates; call it off the hot path.
    /// </summary>
    public static bool IsAlive(int pid, bool checkZombie = true)
    {
        if (pid <= 0)
        {
            return true;
        }

        if (Kill(pid, 0) == 0)
        {
            return !checkZombie || !IsZombie(pid);
        }

        // EPERM: it exists but belongs to someone else.
        return Marshal.GetLastPInvokeError() != NoSuchProcess;
    }

    private static bool IsZombie(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            int end = stat.LastIndexOf(')');
            return end > 0 && end + 2 < stat.Length && stat[end + 2] is 'Z' or 'X';
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    // syscall(2) is variadic in C; on x86-64 and arm64 Linux integer variadic arguments travel exactly like fixed ones.
    [LibraryImport("libc", EntryPoint = "syscall")]
    private static partial long Syscall(long number, int* address, int operation, int value, Timespec* timeout, int* address2, int value3);

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
