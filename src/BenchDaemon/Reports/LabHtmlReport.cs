using System.Text;
using System.Text.Encodings.Web;

namespace IpcBench.Daemon.Reports;

/// <summary>
/// A lab report (<see cref="LabView"/>) as one HTML file, styled like report.html and as self-contained (no script, no
/// network): the same sections as the Markdown, every string encoded. Each machine's own report.json sits beside it.
/// </summary>
public static class LabHtmlReport
{
    public static string Render(LabReport lab, double thresholdPercent)
    {
        string title = $"{lab.Name} — {lab.Machines.Count} machine(s)";
        var html = new StringBuilder();
        html.Append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.Append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n");
        html.Append($"<title>IpcBench — {E(title)}</title>\n<style>\n{HtmlReport.Style}\n</style>\n</head>\n<body>\n");
        html.Append($"<header>\n<h1>{E(title)}</h1>\n<p class=\"meta\">Created {E(lab.CreatedAt.ToString("u"))}</p>\n</header>\n<main>\n");
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
