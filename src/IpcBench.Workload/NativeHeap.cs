using System.Runtime.InteropServices;

namespace IpcBench.Workload;

/// <summary>
/// Pins glibc's mmap threshold for the process (daemon and agents call it first thing). glibc raises the threshold to
/// the size of every mmapped block it frees, so once the first large block (a zlib state of ~270 KB, made and freed by
/// each DeflateStream) had been freed, every later one came from a malloc arena and the arenas kept growing. Two soak
/// scenarios on one daemon (2026-11-28, side by side, 10 minutes): native memory 104 → 116 MiB as it was, flat at
/// ~90.5 MiB with the threshold pinned, 91 → 94.5 MiB with MALLOC_ARENA_MAX=1. Setting the threshold, even to its
/// default, turns the adjustment off. No effect on other C libraries.
/// </summary>
public static partial class NativeHeap
{
    /// <summary>glibc's default: blocks from here on get their own mapping, returned to the kernel when freed.</summary>
    public const int MmapThresholdBytes = 128 * 1024;

    private const int MallocOptionMmapThreshold = -3;

    /// <summary>True when the C library took the setting (glibc); false elsewhere (musl has no mallopt, other systems no glibc).</summary>
    public static bool PinMmapThreshold()
    {
        if (!OperatingSystem.IsLinux())
        {
            return false;
        }

        try
        {
            return Mallopt(MallocOptionMmapThreshold, MmapThresholdBytes) == 1;
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
    }

    [LibraryImport("libc", EntryPoint = "mallopt")]
    private static partial int Mallopt(int option, int value);
}
