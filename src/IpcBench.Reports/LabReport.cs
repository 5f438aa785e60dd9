using System.Text.Json;
using System.Text.Json.Serialization;

namespace IpcBench.Reports;

/// <summary>
/// `run --daemons`: one suite run on several machines. Each machine keeps its own suite report (as its daemon's
/// ExportSuite gave it) or the reason it has none; the first machine with a report is the reference the side-by-side
/// ratios and the comparisons are taken against.
/// </summary>
public sealed record LabReport(string Name, DateTimeOffset CreatedAt, IReadOnlyList<MachineResult> Machines)
{
    /// <summary>The machine every other one is compared with: the first given that finished; null when none did.</summary>
    public MachineResult? Reference => Machines.FirstOrDefault(m => m.Report is not null);

    public IReadOnlyList<MachineResult> Finished => [.. Machines.Where(m => m.Report is not null)];

    /// <summary>Each finished machine but the reference against it, by CompareSuites' rules (rank tests per placement class).</summary>
    public IReadOnlyList<(MachineResult Machine, SuiteComparison Comparison)> Comparisons(double thresholdPercent) => Reference is not { Report: { } reference } first ? []
        : [.. Finished.Where(m => m != first).Select(m => (m, SuiteComparison.Compare(Named(first, reference), Named(m, m.Report!), thresholdPercent)))];

    /// <summary>Suite ids are each daemon's own and may repeat across machines: the comparison names the machine too.</summary>
    private static SuiteReport Named(MachineResult machine, SuiteReport report) => report with { SuiteId = $"{machine.Name} {report.SuiteId}" };
}

/// <param name="Name">The machine's name (--daemons-file), or its address.</param>
/// <param name="Address">The daemon's address as given.</param>
/// <param name="Report">The suite's report; null when the machine failed before one could be read.</param>
/// <param name="Error">Why the machine failed (refused, unreachable, lost mid-suite); null when it finished.</param>
/// <param name="Placement">Where its first scenario's hot loops ran and the machine settings around them (GetSuite's environment).</param>
public sealed record MachineResult(string Name, string Address, SuiteReport? Report, string? Error, MachinePlacement? Placement = null)
{
    public bool Failed => Error is not null;

    /// <summary>What the machines table shows: its suite's state, or FAILED.</summary>
    public string State => Failed ? "FAILED" : Report?.State ?? "–";
}

/// <summary>The placement facts of a machine (control.proto's PlacementInfo and the probe's cores), as text for every format.</summary>
public sealed record MachinePlacement(
    string PublisherCpus,
    string SubscriberCpus,
    string ProbeCores,
    string SamePhysicalCore,
    IReadOnlyList<string> SharedCaches,
    string Smt,
    string SmtSiblings,
    string NumaNodes,
    string Cpufreq,
    string IsolatedCpus,
    string NohzFullCpus,
    string CgroupCpuQuota,
    string TransparentHugePages)
{
    public string Text => $"publishers on {PublisherCpus}, subscribers on {SubscriberCpus}, probe {ProbeCores}; same physical core {SamePhysicalCore}, " +
        $"shared caches {(SharedCaches.Count == 0 ? "none" : string.Join(", ", SharedCaches))}; SMT {Smt} (siblings {SmtSiblings}); NUMA {NumaNodes}; " +
        $"cpufreq {Cpufreq}; isolated [{IsolatedCpus}], nohz_full [{NohzFullCpus}]; cgroup quota {CgroupCpuQuota}; THP {TransparentHugePages}";
}

/// <summary>
/// A cell's medians on every finished machine, with each machine's ratio to the reference's: what the side-by-side
/// tables of every format show. Cells in the reference's order, then those only other machines ran.
/// </summary>
public sealed record SideBySideRow(CellKey Key, IReadOnlyList<MachineFigures?> Machines)
{
    public string Label => Key.Label;

    public static IReadOnlyList<SideBySideRow> Of(LabReport lab)
    {
        var finished = lab.Finished;
        var keys = finished.SelectMany(m => m.Report!.Cells.Select(c => c.Key)).Distinct().ToList();
        return [.. keys.Select(key =>
        {
            var summaries = finished.Select(m => m.Report!.Cells.FirstOrDefault(c => c.Key == key)?.Summary).ToList();
            var reference = summaries[0];
            return new SideBySideRow(key, [.. summaries.Select((s, i) => s is null ? null : MachineFigures.Of(finished[i].Name, s, i == 0 ? null : reference))]);
        })];
    }
}

/// <summary>
/// One machine's medians in a cell (latency in ns), and each over the reference's (null for the reference itself or
/// where either side has no successful repetition). A latency ratio above 1 is slower; a msg/s ratio above 1 faster.
/// </summary>
public sealed record MachineFigures(string Machine, int Repetitions, int Failed, double MessagesPerSecond, double LatencyP50, double LatencyP99,
    double? MessagesPerSecondRatio, double? LatencyP50Ratio, double? LatencyP99Ratio)
{
    public static MachineFigures Of(string machine, CellSummary s, CellSummary? reference)
    {
        bool comparable = reference is { Repetitions: > 0 } && s.Repetitions > 0;
        double? Ratio(double value, double baseline) => comparable && baseline > 0 ? value / baseline : null;
        return new MachineFigures(machine, s.Repetitions, s.Failed, s.MessagesPerSecond.Median, s.LatencyP50.Median, s.LatencyP99.Median,
            Ratio(s.MessagesPerSecond.Median, reference?.MessagesPerSecond.Median ?? 0), Ratio(s.LatencyP50.Median, reference?.LatencyP50.Median ?? 0),
            Ratio(s.LatencyP99.Median, reference?.LatencyP99.Median ?? 0));
    }
}

/// <summary>
/// report.json of a lab run: every machine by name and address, its state and error, placement, its whole suite report
/// (the document ExportSuite returns, so a machine's part reads like any report.json) and its comparison with the
/// reference; then the side-by-side rows. snake_case, as every report document.
/// </summary>
public sealed record LabDocument(LabInfo Lab, IReadOnlyList<MachineDocument> Machines, IReadOnlyList<SideBySideRow> SideBySide)
{
    public static LabDocument Build(LabReport lab, double thresholdPercent)
    {
        var comparisons = lab.Comparisons(thresholdPercent).ToDictionary(c => c.Machine.Name, c => c.Comparison, StringComparer.Ordinal);
        var machines = lab.Machines.Select(m => new MachineDocument(m.Name, m.Address, m.State, m.Error, m.Placement,
            m.Report is null ? null : ReportDocument.Build(m.Report), comparisons.GetValueOrDefault(m.Name))).ToList();
        return new LabDocument(new LabInfo(lab.Name, lab.CreatedAt, lab.Reference?.Name, thresholdPercent), machines, SideBySide: SideBySideRow.Of(lab));
    }

    public string ToJson() => JsonSerializer.Serialize(this, new JsonSerializerOptions(ReportDocument.JsonOptions) { WriteIndented = true });
}

/// <param name="Reference">The machine the ratios and comparisons are against; null when no machine finished.</param>
public sealed record LabInfo(string Name, DateTimeOffset CreatedAt, string? Reference, double ThresholdPercent);

/// <param name="Comparison">Against the reference; absent for the reference itself and for a failed machine.</param>
public sealed record MachineDocument(string Name, string Address, string State, string? Error, MachinePlacement? Placement, ReportDocument? Report,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] SuiteComparison? Comparison);
