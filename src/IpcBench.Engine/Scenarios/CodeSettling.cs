namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// Whether code generation has settled in every process of a scenario: the daemon (publishers, in-process subscribers)
/// and each agent. With tiered compilation hot paths start as quick code and are recompiled on a background thread with
/// what dynamic PGO learned; on two cores that thread takes its time from the hot loops, and a 2 s window that began
/// after a 0.5 s warmup spent over a second of JIT time (grpc-uds, docs/how-it-measures.md). Compilation never stops
/// altogether (a path called once a second tiers up after 30 calls), so a process counts as settled once the JIT used
/// at most <see cref="MaxShare"/> of one core over the last <see cref="Span"/>.
/// </summary>
internal sealed class CodeSettling
{
    /// <summary>The span a process's JIT time is judged over.</summary>
    public static readonly TimeSpan Span = TimeSpan.FromSeconds(1);

    /// <summary>At most this share of one core spent compiling over <see cref="Span"/>: 20 ms a second.</summary>
    public const double MaxShare = 0.02;

    private readonly Dictionary<string, List<(long AtNs, TimeSpan Jit)>> _readings = new(StringComparer.Ordinal);

    /// <summary>A reading of a process's total JIT time (JitInfo.GetCompilationTime), taken at <paramref name="atNs"/>.</summary>
    public void Observe(string process, TimeSpan jitTime, long atNs)
    {
        if (!_readings.TryGetValue(process, out var readings))
        {
            _readings[process] = readings = [];
        }

        if (readings.Count > 0 && readings[^1].AtNs >= atNs)
        {
            // The same report read again (agents' arrive every 100 ms; the daemon polls every 50).
            return;
        }

        readings.Add((atNs, jitTime));
        // Keep one reading at least a span old, as the base of the newest span, and everything after it.
        int firstNeeded = readings.FindLastIndex(r => r.AtNs <= atNs - Span.Ticks * 100);
        if (firstNeeded > 0)
        {
            readings.RemoveRange(0, firstNeeded);
        }
    }

    /// <summary>
    /// Whether each of <paramref name="processes"/> has readings at least <see cref="Span"/> apart between which its JIT
    /// used at most <see cref="MaxShare"/> of a core. A process read for less than a span has not settled.
    /// </summary>
    public bool Settled(IEnumerable<string> processes) => processes.All(p => JitShare(p) is <= MaxShare);

    /// <summary>The share of one core the process's JIT used over its newest span; null before a span was read.</summary>
    public double? JitShare(string process)
    {
        if (!_readings.TryGetValue(process, out var readings) || readings.Count < 2)
        {
            return null;
        }

        var (newestNs, newestJit) = readings[^1];
        int baseIndex = readings.FindLastIndex(r => r.AtNs <= newestNs - Span.Ticks * 100);
        if (baseIndex < 0)
        {
            return null;
        }

        var (baseNs, baseJit) = readings[baseIndex];
        return (newestJit - baseJit).TotalSeconds / ((newestNs - baseNs) / 1e9);
    }
}
