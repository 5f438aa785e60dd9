using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace IpcBench.Transports.SharedMemory;

/// <summary>The system call the ring needs: futex wait and wake on shared memory.</summary>
[SupportedOSPlatform("linux")]
internal static unsafe partial class LinuxNative
{
    // Not the *_PRIVATE variants: the futex word lives in a file mapping shared between processes, so the kernel must
    // key waiters by (inode, offset), not by this process's address space.
    private const int FutexWaitOperation = 0;
    private const int FutexWakeOperation = 1;
    private const int ETimedOut = 110;

    private static readonly long SysFutex = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 => 202,
        Architecture.Arm64 => 98,
        _ => -1,
    };

    public static bool FutexSupported => SysFutex > 0;

    /// <summary>
    /// Sleeps while <c>*address == expected</c>, at most <paramref name="timeoutMs"/>. Spurious returns are the caller's to
    /// re-check. False when the wait ran out its timeout (ETIMEDOUT); true for a wake-up, a changed word or a signal.
    /// </summary>
    public static bool FutexWait(int* address, int expected, int timeoutMs)
    {
        var timeout = new Timespec { Seconds = timeoutMs / 1000, Nanoseconds = timeoutMs % 1000 * 1_000_000L };
        return Syscall(SysFutex, address, FutexWaitOperation, expected, &timeout, null, 0) == 0
            || Marshal.GetLastSystemError() != ETimedOut;
    }

    public static void FutexWake(int* address, int count) => Syscall(SysFutex, address, FutexWakeOperation, count, null, null, 0);

    // syscall(2) is variadic in C; on x86-64 and arm64 Linux integer variadic arguments travel exactly like fixed ones.
    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static partial long Syscall(long number, int* address, int operation, int value, Timespec* timeout, int* address2, int value3);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
