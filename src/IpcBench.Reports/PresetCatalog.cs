namespace IpcBench.Reports;

/// <summary>
/// Every preset a suite may name: the reference presets (docs/published-figures.md), then the saturation presets over
/// the transports the caller's registry ships. Built from the registry's ids, so a transport added there is measured
/// by saturation-1 with no second list to keep; the host builds one from its own TransportRegistry.
/// </summary>
public sealed class PresetCatalog
{
    public PresetCatalog(IEnumerable<string> transports)
    {
        Suites = [.. ReferencePresets.All, .. SaturationPresets.For([.. transports])];
    }

    public IReadOnlyList<ReferencePreset> Suites { get; }

    public ReferencePreset? Find(string id) => Suites.FirstOrDefault(p => string.Equals(p.Id, id, StringComparison.Ordinal));
}
