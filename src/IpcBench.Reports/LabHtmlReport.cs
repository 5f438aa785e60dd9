using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace IpcBench.Reports;

/// <summary>
/// A lab report (<see cref="LabView"/>) as one HTML file, styled like report.html and as self-contained (Chart.js inlined,
/// no network): the machines chart (msg/s per cell, a bar per machine), then the same sections as the Markdown, every
/// string encoded. Each machine's own report.json sits beside it.
/// </summary>
public static class LabHtmlReport
{
    public static string Render(LabReport lab, double thresholdPercent)
    {
        string title = $"{lab.Name} — {lab.Machines.Count} machine(s)";
        var html = new StringBuilder();
        html.Append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.Append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n");
        html.Append($"<title>IpcBench — {E(title)}</title>\n<style>\n{HtmlReport.Style}\n</style>\n</head>\n<body>\n");
        html.Append($"<header>\n<h1>{E(title)}</h1>\n<p class=\"meta\">Created {E(lab.CreatedAt.ToString("u"))}</p>\n</header>\n<main>\n");
        var rows = SideBySideRow.Of(lab);
        if (rows.Count > 0)
        {
            // The default encoder escapes <, > and & as \u003C etc., so no machine or cell name can close the element.
            var chart = new
            {
                cells = rows.Select(r => r.Label).ToList(),
                machines = lab.Finished.Select((m, i) => new { name = m.Name, messages_per_second = rows.Select(r => r.Machines[i]?.MessagesPerSecond ?? 0).ToList() }),
            };
            html.Append("<section id=\"machines-chart-section\"><h2>Machines, cell by cell</h2>\n")
                .Append($"<canvas id=\"machines-chart\" width=\"{Math.Max(640, 90 * rows.Count * Math.Max(1, lab.Finished.Count) / 2)}\" height=\"420\"></canvas>\n</section>\n")
                .Append("<script type=\"application/json\" id=\"lab-chart-data\">").Append(JsonSerializer.Serialize(chart)).Append("</script>\n")
                .Append("<script>\n").Append(HtmlReport.Asset("chart.umd.min.js")).Append('\n').Append(HtmlReport.Asset("lab.js")).Append("\n</script>\n");
        }

        foreach (var section in LabView.Sections(lab, thresholdPercent))
        {
            html.Append($"<section id=\"{E(section.Id)}\"><h2>{E(section.Title)}</h2>\n");
            foreach (var paragraph in section.Paragraphs)
            {
                html.Append($"<p>{E(paragraph)}</p>\n");
            }

            html.Append("<table><thead><tr>").Append(string.Concat(section.Header.Select(h => $"<th>{E(h)}</th>"))).Append("</tr></thead><tbody>\n");
            foreach (var row in section.Rows)
            {
                html.Append("<tr>").Append(string.Concat(row.Select(c => $"<td>{E(c)}</td>"))).Append("</tr>\n");
            }

            html.Append("</tbody></table>\n");
            foreach (var note in section.Notes)
            {
                html.Append($"<p class=\"note\">{E(note)}</p>\n");
            }

            html.Append("</section>\n");
        }

        html.Append("</main>\n</body>\n</html>\n");
        return html.ToString();
    }

    private static string E(string value) => HtmlEncoder.Default.Encode(value);
}
