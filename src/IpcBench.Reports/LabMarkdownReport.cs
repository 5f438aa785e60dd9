using System.Text;

namespace IpcBench.Reports;

/// <summary>A lab report (<see cref="LabView"/>) as Markdown: what `run --daemons` prints on stdout and writes to report.md.</summary>
public static class LabMarkdownReport
{
    public static string Render(LabReport lab, double thresholdPercent)
    {
        var text = new StringBuilder();
        text.AppendLine($"# {MarkdownReport.Escape(lab.Name)} — {lab.Machines.Count} machine(s)");
        text.AppendLine();
        foreach (var section in LabView.Sections(lab, thresholdPercent))
        {
            text.AppendLine($"## {MarkdownReport.Escape(section.Title)}");
            text.AppendLine();
            foreach (var paragraph in section.Paragraphs)
            {
                text.AppendLine(MarkdownReport.Escape(paragraph));
                text.AppendLine();
            }

            text.AppendLine("| " + string.Join(" | ", section.Header.Select(MarkdownReport.Escape)) + " |");
            text.AppendLine("|" + string.Concat(section.Header.Select(_ => "---|")));
            foreach (var row in section.Rows)
            {
                text.AppendLine("| " + string.Join(" | ", row.Select(MarkdownReport.Escape)) + " |");
            }

            text.AppendLine();
            foreach (var note in section.Notes)
            {
                text.AppendLine($"- {MarkdownReport.Escape(note)}");
            }

            if (section.Notes.Count > 0)
            {
                text.AppendLine();
            }
        }

        return text.ToString();
    }
}
