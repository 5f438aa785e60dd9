using CsvHelper;

namespace IpcBench.Tests.Shared;

/// <summary>
/// A CSV document read back with CsvHelper's reader as a header and rows, for assertions. Strict on purpose: a second
/// table, an empty line or a row with another field count throws, so a test that parses an export also proves the
/// export is one table a CSV reader takes.
/// </summary>
internal sealed record CsvTable(IReadOnlyList<string> Header, IReadOnlyList<IReadOnlyList<string>> Rows)
{
    private static readonly CsvReaderOptions Strict = CsvReaderOptions.Default with
    {
        // Not detected: a document of one column must not be read as separated by something else.
        Separator = ',',
        SkipEmptyLines = false,
        FieldCountMismatch = CsvFieldCountHandling.Throw,
        MalformedData = CsvMalformedDataHandling.Throw,
        DetectSeparatorHint = false,
    };

    public string Get(IReadOnlyList<string> row, string column)
    {
        int index = Header.ToList().IndexOf(column);
        Assert.True(index >= 0, $"no column '{column}' in {string.Join(',', Header)}");
        return row[index];
    }

    public static CsvTable Parse(string text)
    {
        using var reader = CsvReader.Create(new StringReader(text), Strict);
        var header = reader.Headers.ToList();
        Assert.True(header.Count > 0, "an empty CSV document");
        var rows = new List<IReadOnlyList<string>>();
        while (reader.Read())
        {
            rows.Add([.. Enumerable.Range(0, reader.FieldCount).Select(reader.GetString)]);
        }

        Assert.All(rows, r => Assert.Equal(header.Count, r.Count));
        return new CsvTable(header, rows);
    }
}
