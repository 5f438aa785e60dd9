namespace IpcBench.Soak;

/// <summary>
/// The soak's leak signal: the live heap (<see cref="LiveHeapProbe"/>) of the daemon and of every agent of the scenarios
/// being soaked, read once all their measured windows have begun and again at the end, all processes at once. The
/// scenarios run until stopped, so the second reading is always a whole window after the first however slowly a loaded
/// machine answers, and an agent is read while it is still there.
/// </summary>
public sealed class HeapReadings
{
    /// <summary>Generous: a loaded machine answers the diagnostics IPC slowly, and a reading that times out fails the check.</summary>
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(30);

    private readonly Dictionary<int, LiveHeap?> _first;
    private readonly Dictionary<int, LiveHeap?> _last;

    private HeapReadings(Dictionary<int, LiveHeap?> first, Dictionary<int, LiveHeap?> last, double seconds)
    {
        _first = first;
        _last = last;
        Seconds = seconds;
    }

    /// <summary>Time between the two readings.</summary>
    public double Seconds { get; }

    /// <summary>
    /// The reading that is not counted: a process's first EventPipe session costs it once (the runtime's event sources
    /// and their buffers, a descriptor or two), so neither the heap nor the descriptors compared count the probe. Taken
    /// in the warmup, once every agent is known: on a loaded machine a reading of some thirty processes takes seconds.
    /// </summary>
    public static Task PrimeAsync(IReadOnlyCollection<int> pids, Action reading) => Read(pids, reading);

    /// <summary>Reads <paramref name="pids"/> (<paramref name="reading"/> called as each reading starts and ends), says so through <paramref name="firstRead"/>, waits <paramref name="window"/> (or until <paramref name="ended"/> ends early), reads the same pids again.</summary>
    public static async Task<HeapReadings> TakeAsync(IReadOnlyCollection<int> pids, TimeSpan window, Task ended, Action reading, Action firstRead)
    {
        var first = await Read(pids, reading);
        firstRead();
        var clock = System.Diagnostics.Stopwatch.StartNew();
        await Task.WhenAny(Task.Delay(window), ended);
        var last = await Read(pids, reading);
        return new HeapReadings(first, last, clock.Elapsed.TotalSeconds);
    }

    private static async Task<Dictionary<int, LiveHeap?>> Read(IReadOnlyCollection<int> pids, Action reading)
    {
        reading();
        try
        {
            return await ReadAsync(pids);
        }
        finally
        {
            reading();
        }
    }

    /// <summary>What <paramref name="pids"/> held together at each reading; null when one of them did not answer.</summary>
    public (LiveHeap? First, LiveHeap? Last) Of(IReadOnlyCollection<int> pids) => (Sum(_first, pids), Sum(_last, pids));

    private static async Task<Dictionary<int, LiveHeap?>> ReadAsync(IReadOnlyCollection<int> pids)
    {
        var readings = await Task.WhenAll(pids.Select(async pid => (pid, heap: await LiveHeapProbe.MeasureAsync(pid, ProbeTimeout))));
        return readings.ToDictionary(r => r.pid, r => r.heap);
    }

    private static LiveHeap? Sum(Dictionary<int, LiveHeap?> readings, IReadOnlyCollection<int> pids)
    {
        if (pids.Any(pid => !readings.TryGetValue(pid, out var heap) || heap is null))
        {
            return null;
        }

        return new LiveHeap(pids.Sum(pid => readings[pid]!.LiveBytes), pids.Sum(pid => readings[pid]!.HeapBytes));
    }
}
