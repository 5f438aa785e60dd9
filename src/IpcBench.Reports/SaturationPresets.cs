namespace IpcBench.Reports;

/// <summary>
/// Presets that measure load rather than reproduce a published figure: every cell searches the highest rate it
/// sustains (SuiteSpec.rate_search, with the preset's latency bound unless the suite gives its own).
/// </summary>
public static class SaturationPresets
{
    /// <summary>
    /// The saturation presets over <paramref name="transports"/>, the ids of the caller's registry in its order (the
    /// host passes its TransportRegistry's, <see cref="PresetCatalog"/>): one the machine lacks is refused by
    /// StartSuite and skipped by `run`. Ids from the caller rather than a registry built here, because building one
    /// configures iceoryx2's native library for the whole process, over what the daemon configured.
    /// </summary>
    public static IReadOnlyList<ReferencePreset> For(IReadOnlyList<string> transports) => [Saturation1(transports)];

    /// <summary>1 KB, 1:1 and 2:4: the highest rate per publisher each transport sustains with latency p99 within 1 ms.</summary>
    private static ReferencePreset Saturation1(IReadOnlyList<string> transports)
    {
        var cells = (from shape in new[] { (Publishers: 1, Subscribers: 1), (Publishers: 2, Subscribers: 4) }
                     from transport in transports
                     select new PresetCell(new CellKey(transport, 1024, shape.Publishers, shape.Subscribers), [])).ToList();
        return new ReferencePreset("saturation-1", "Sustainable rate: every transport at 1 KB, 1:1 and 2:4",
            "Offered load, not a published figure: per cell a closed-loop run, then rate-limited probes (x4 ramp, then bisection) for the highest " +
            "rate per publisher delivered at 99 % with latency p99 (from intended send times, a late publisher counting in full) within 1 ms and receivers keeping up.",
            TimeSpan.FromSeconds(2), TimeSpan.FromMilliseconds(500), cells, [])
        {
            SearchMaxP99Latency = TimeSpan.FromMilliseconds(1),
        };
    }
}
