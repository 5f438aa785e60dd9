namespace IpcBench.Reports;

/// <summary>A suite that reproduces one section of docs/published-figures.md: its cells, and the published figures each reproduces.</summary>
public sealed record ReferencePreset(
    string Id,
    string Title,
    string Reproduces,
    TimeSpan Duration,
    TimeSpan Warmup,
    IReadOnlyList<PresetCell> Cells,
    IReadOnlyList<string> NotReproduced)
{
    /// <summary>Saturation presets: every cell searches its sustainable rate with latency p99 within this; null for none.</summary>
    public TimeSpan? SearchMaxP99Latency { get; init; }
}

/// <summary>A cell of a preset; <see cref="Published"/> is empty for cells run beside the published ones (FULL beside HEADER_ONLY).</summary>
public sealed record PresetCell(CellKey Key, IReadOnlyList<PublishedFigure> Published);
