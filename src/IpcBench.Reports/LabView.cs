using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>A part of a lab report: a heading, paragraphs, one table and notes under it, all plain text.</summary>
/// <param name="Id">An HTML id for the section.</param>
public sealed record LabSection(string Id, string Title, IReadOnlyList<string> Paragraphs, IReadOnlyList<string> Header,
    IReadOnlyList<IReadOnlyList<string>> Rows, IReadOnlyList<string> Notes);

/// <summary>
/// A lab report as sections of tables, built once so Markdown and HTML show the same text: the machines (environment
/// and failures), msg/s and latency p50/p99 side by side with each machine's ratio to the reference, the placement facts,
/// and each machine's comparison with the reference.
/// </summary>
public static class LabView
{
    public static IReadOnlyList<LabSection> Sections(LabReport lab, double thresholdPercent)
    {
        var sections = new List<LabSection> { Machines(lab) };
        var rows = SideBySideRow.Of(lab);
        if (rows.Count > 0)
        {
            var names = lab.Finished.Select(m => m.Name).ToList();
            sections.Add(SideBySide("msgs", "Side by side: msg/s (median over the repetitions)", names, rows, f => f.MessagesPerSecond, f => f.MessagesPerSecondRatio, Count));
            sections.Add(SideBySide("p50", "Side by side: latency p50, µs", names, rows, f => f.LatencyP50, f => f.LatencyP50Ratio, Micros));
            sections.Add(SideBySide("p99", "Side by side: latency p99, µs", names, rows, f => f.LatencyP99, f => f.LatencyP99Ratio, Micros));
        }

        var placed = lab.Machines.Where(m => m.Placement is not null).ToList();
        if (placed.Count > 0)
        {
            sections.Add(new LabSection("placement", "Placement", ["Where each machine's first scenario ran, and the settings around it."], ["Machine", "Placement"],
                [.. placed.Select(m => (IReadOnlyList<string>)[m.Name, m.Placement!.Text])], []));
        }

        sections.AddRange(lab.Comparisons(thresholdPercent).Select((c, i) => Comparison($"comparison-{i + 1}", lab.Reference!.Name, c.Machine.Name, c.Comparison)));
        return sections;
    }

    private static LabSection Machines(LabReport lab)
    {
        var paragraphs = new List<string>
        {
            lab.Reference is { } reference
                ? $"{lab.Finished.Count} of {lab.Machines.Count} machine(s) finished. Reference: {reference.Name}; every ratio is a machine's median over {reference.Name}'s " +
                  "(msg/s above 1 is faster, latency above 1 is slower)."
                : $"None of the {lab.Machines.Count} machine(s) finished.",
        };
        var rows = lab.Machines.Select(m => m.Report?.Environment is { } e
            ? (IReadOnlyList<string>)[m.Name, m.Address, m.State, m.Report.SuiteId, $"{e.CpuModel}, {e.LogicalCores} cores", $"{e.Os}, kernel {e.Kernel}",
                $"{e.DotnetVersion}, {e.BuildVersion}", e.Hostname, e.Clock.Length > 0 ? e.Clock : "–", e.CoreToCoreNanoseconds is { } ns ? $"{ns:0} ns" : "–"]
            : [m.Name, m.Address, m.State, "–", "–", "–", "–", "–", "–", "–"]).ToList();
        var failures = lab.Machines.Where(m => m.Failed).Select(m => $"{m.Name} ({m.Address}) failed: {m.Error}").ToList();
        return new LabSection("machines", "Machines", paragraphs,
            ["Machine", "Address", "State", "Suite", "CPU", "OS, kernel", ".NET, IpcBench", "Host", "Clock", "Core-to-core"], rows, failures);
    }

    private static LabSection SideBySide(string id, string title, IReadOnlyList<string> names, IReadOnlyList<SideBySideRow> rows,
        Func<MachineFigures, double> figure, Func<MachineFigures, double?> ratio, Func<double, string> format)
    {
        var header = new List<string> { "Cell", names[0] };
        foreach (var name in names.Skip(1))
        {
            header.Add(name);
            header.Add($"{name} ÷ {names[0]}");
        }

        var table = rows.Select(row =>
        {
            var cells = new List<string> { row.Label, Value(row.Machines[0]) };
            foreach (var machine in row.Machines.Skip(1))
            {
                cells.Add(Value(machine));
                cells.Add(machine is not null && ratio(machine) is { } r ? Ratio(r) : "–");
            }

            return (IReadOnlyList<string>)cells;
        }).ToList();
        return new LabSection(id, title, [], header, table, []);

        string Value(MachineFigures? f) => f switch
        {
            null or { Repetitions: 0, Failed: 0 } => "not run",
            { Repetitions: 0 } => "failed",
            _ => format(figure(f)) + (f.Failed > 0 ? $" ({f.Failed} failed)" : string.Empty),
        };
    }

    /// <summary>The "Compared with baseline" table of MarkdownReport, with the machines' names for baseline and candidate.</summary>
    private static LabSection Comparison(string id, string reference, string machine, SuiteComparison c)
    {
        var rows = new List<IReadOnlyList<string>>();
        foreach (var cell in c.Cells)
        {
            foreach (var (label, verdict, rate, p99, metrics) in Rows(cell))
            {
                rows.Add([label, VerdictName(verdict), Side(rate, true, Count), Side(rate, false, Count), SideChange(rate), Shift(rate),
                    Side(p99, true, Micros), Side(p99, false, Micros), SideChange(p99),
                    RowNotes(metrics, cell.Notes)]);
            }
        }

        return new LabSection(id, $"{machine} against {reference}",
            [$"{VerdictName(c.Verdict)} — {ComparisonSummary(c)} {ComparisonMethod}."],
            ["Cell", "Verdict", $"msg/s {reference}", $"msg/s {machine}", "msg/s change", "msg/s shift", $"p99 µs {reference}", $"p99 µs {machine}", "p99 change",
             "Beyond the threshold, notes"], rows, c.Notes);
    }
}
