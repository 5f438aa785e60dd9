using System.Text.Json.Serialization;

namespace IpcBench.Reports;

/// <summary>
/// A cell's repetitions as groups (<see cref="Modality"/>): of msg/s, and of latency p50 where latency was sampled;
/// with the placement class each repetition ran in, in the order of the cell's repetitions (failed ones included), for
/// the strip plot and the CSV rows.
/// </summary>
public sealed record CellModality(
    Modality MessagesPerSecond,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] Modality? LatencyP50,
    IReadOnlyList<string> Placements)
{
    /// <summary>
    /// Every cell's, with the placement classes drawn once over the whole suite's probes (as CompareSuites pools
    /// them): a cell of six repetitions that all ran near can hold 90 and 190 ns, a 2x gap that would call one of them
    /// far if the cell were split on its own, while the suite's probes span the real near–far gap, and a class then
    /// means the same in every cell.
    /// </summary>
    public static IReadOnlyList<CellModality> Of(SuiteReport report)
    {
        var strata = StrataOf(report);
        return [.. report.Cells.Select(c => Of(c, strata))];
    }

    public static PlacementStrata StrataOf(SuiteReport report) =>
        PlacementStrata.Of(report.Cells.SelectMany(c => c.Repetitions).Where(r => r.Succeeded).Select(r => r.ProbeNanoseconds));

    /// <summary>The rule the classes were drawn by, in words; or that no repetition carried a probe.</summary>
    public static string DescribePlacements(SuiteReport report, PlacementStrata strata) =>
        report.Cells.Any(c => c.Repetitions.Any(r => r.ProbeNanoseconds is > 0)) ? strata.Describe()
            : "no core-to-core probe recorded: every repetition's placement is unknown";

    public static CellModality Of(ReportCell cell, PlacementStrata strata)
    {
        var placements = cell.Repetitions.Select(r => strata.ClassOf(r.ProbeNanoseconds)).ToList();
        var ok = cell.Repetitions.Select((r, i) => (Repetition: r, Placement: placements[i])).Where(p => p.Repetition.Succeeded).ToList();
        var rate = Modality.Of([.. ok.Select(p => p.Repetition.MessagesPerSecond)], [.. ok.Select(p => p.Placement)], ReportFormatting.Count);
        // A cell without latency samples (none recorded) has no p50 to group; 0 would read as one more mode.
        var sampled = ok.Where(p => p.Repetition.Latency.Samples > 0).ToList();
        var p50 = sampled.Count == 0 ? null
            : Modality.Of([.. sampled.Select(p => p.Repetition.Latency.P50)], [.. sampled.Select(p => p.Placement)], ns => ReportFormatting.Micros(ns) + " µs");
        return new CellModality(rate, p50, placements);
    }

    /// <summary>What the tables show: msg/s's modality, and p50's when it is multimodal too.</summary>
    public string Text => MessagesPerSecond.Text +
        (LatencyP50 is { Kind: ModalityKind.Multimodal } p50 ? $"; latency p50 {p50.Text}" : string.Empty);
}
