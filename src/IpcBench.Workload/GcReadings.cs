namespace IpcBench.Workload;

/// <summary>
/// What this process's collector says about its memory, for the soak's leak rules. The heap size after the last
/// collection of any kind still holds every dead object of the generations that collection skipped (the daemon's read
/// 50.6 MiB when a full collection found 36.7 MiB live), so the live heap is read off the last gen2 collection.
/// </summary>
public static class GcReadings
{
    /// <summary>
    /// Heap bytes after the latest gen2 collection (blocking or background); before the first one, after the latest
    /// collection of any kind (the best there is: a process that never needed a gen2 has little in gen2 to be dead).
    /// Less the free space between objects the collection left (its fragmentation): a background gen2 sweeps without
    /// compacting, and the daemon's heap size after one read 41.9 MB while a heap walk found 3.5 MB of objects.
    /// </summary>
    public static long LiveHeapBytes()
    {
        var blocking = GC.GetGCMemoryInfo(GCKind.FullBlocking);
        var background = GC.GetGCMemoryInfo(GCKind.Background);
        var last = blocking.Index >= background.Index ? blocking : background;
        var info = last.Index > 0 ? last : GC.GetGCMemoryInfo();
        return info.HeapSizeBytes - info.FragmentedBytes;
    }

    /// <summary>Memory the collector holds from the OS, live or free: part of the RSS the collector sizes to its own policy.</summary>
    public static long CommittedBytes() => GC.GetGCMemoryInfo().TotalCommittedBytes;
}
