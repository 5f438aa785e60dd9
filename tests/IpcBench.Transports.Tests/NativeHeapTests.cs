using System.Runtime.InteropServices;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

[Collection(nameof(LightRuns))]
public sealed class NativeHeapTests
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
            // glibc serves even a block above the threshold from a free chunk an arena already holds (other tests of this
            // process leave some): hold such blocks until the heap would have to grow, where the threshold decides.
            var held = new List<nint>();
            try
            {
                bool mapped = false;
                while (!mapped && held.Count < 256)
                {
                    void* block = NativeMemory.Alloc(2 * NativeHeap.MmapThresholdBytes);
                    held.Add((nint)block);
                    mapped = IsMappedOnItsOwn(block);
                }

                Assert.True(mapped, $"round {round}: {held.Count} blocks of {2 * NativeHeap.MmapThresholdBytes} B all came from an arena");
            }
            finally
            {
                held.ForEach(b => NativeMemory.Free((void*)b));
            }
        }
    }

    /// <summary>
    /// glibc marks a chunk it mapped on its own with IS_MMAPPED (0x2) in the size word just before the block. This is
    /// the block's own answer; mallinfo2()'s mapped-bytes total is process-wide, so another test's thread freeing a
    /// mapped block between two reads hid this one's growth (CI, 2026-11-28: "grew 0 B").
    /// </summary>
    private static unsafe bool IsMappedOnItsOwn(void* block) => (((nuint*)block)[-1] & 0x2) != 0;
}
