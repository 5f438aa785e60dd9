using System.Runtime.InteropServices;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

public sealed partial class NativeHeapTests
{
    /// <summary>
    /// With the threshold pinned, a block above it is mapped on its own every time, also after one was freed (glibc's
    /// own adjustment would have raised the threshold past it and served the second from an arena).
    /// </summary>
    [Fact]
    public unsafe void PinnedThreshold_KeepsMappingLargeBlocks_AfterOneWasFreed()
    {
        Assert.True(NativeHeap.PinMmapThreshold(), "mallopt refused M_MMAP_THRESHOLD (not glibc?)");

        for (int round = 0; round < 3; round++)
        {
            long before = MappedBytes();
            void* block = NativeMemory.Alloc(2 * NativeHeap.MmapThresholdBytes);
            try
            {
                long grew = MappedBytes() - before;
                Assert.True(grew >= 2 * NativeHeap.MmapThresholdBytes, $"round {round}: mapped bytes grew {grew} B for a {2 * NativeHeap.MmapThresholdBytes} B block: it came from an arena");
            }
            finally
            {
                NativeMemory.Free(block);
            }
        }
    }

    /// <summary>glibc's mallinfo2().hblkhd: bytes in blocks mapped on their own.</summary>
    private static long MappedBytes() => (long)MallInfo2().MappedBytes;

    [LibraryImport("libc", EntryPoint = "mallinfo2")]
    private static partial MallInfo MallInfo2();

    [StructLayout(LayoutKind.Sequential)]
    private struct MallInfo
    {
        public nuint Arena;
        public nuint OrdinaryBlocks;
        public nuint SmallBlocks;
        public nuint MappedBlocks;
        public nuint MappedBytes;
        public nuint MaxTotal;
        public nuint FreedSmallBytes;
        public nuint AllocatedBytes;
        public nuint FreeBytes;
        public nuint Keep;
    }
}
