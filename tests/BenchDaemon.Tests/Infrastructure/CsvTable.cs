using System.Text;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>An RFC 4180 CSV document (quoted fields, doubled quotes, CRLF or LF) as a header and rows, for assertions.</summary>
internal sealed record CsvTable(IReadOnlyList<string> Header, IReadOnlyList<IReadOnlyList<string>> Rows)
{
    public string Get(IReadOnlyList<string> row, string column)
    {
        int index = Header.ToList().IndexOf(column);
        Assert.True(index >= 0, $"no column '{column}' in {string.Join(',', Header)}");
        return row[index];
    }

    public static CsvTable Parse(string text)
    {
        var records = new List<IReadOnlyList<string>>();
        var fields = new List<string>();
        var field = new StringBuilder();
        bool quoted = false;
        for (int i = 0; i < text.Length; i++)
        {
            char c = text[i];
            if (quoted)
            {
                if (c == '"' && i + 1 < text.Length && text[i + 1] == '"')
                {
                    field.Append('"');
                    i++;
                }
                else if (c == '"')
                {
                    quoted = false;
                }
                else
                {
                    field.Append(c);
                }
            }
            else if (c == '"')
            {
                quoted = true;
            }
            else if (c == ',')
            {
                fields.Add(field.ToString());
                field.Clear();
            }
            else if (c is '\r' or '\n')
            {
                if (c == '\r' && i + 1 < text.Length && text[i + 1] == '\n')
                {
                    i++;
                }

                fields.Add(field.ToString());
                field.Clear();
                records.Add(fields);
                fields = [];
            }
            else
            {
                field.Append(c);
            }
        }

        if (field.Length > 0 || fields.Count > 0)
        {
            fields.Add(field.ToString());
            records.Add(fields);
        }

        Assert.True(records.Count > 0, "an empty CSV document");
        Assert.All(records, r => Assert.Equal(records[0].Count, r.Count));
        return new CsvTable(records[0], records.Skip(1).ToList());
    }
}
