using CsvHelper;

namespace IpcBench.Reports;

/// <summary>
/// Every CSV document the daemon writes (ExportScenarios' summary and series, `run --out`'s results*.csv, the suite
/// report and its baseline comparison) goes through here, so they cannot drift apart again: one table per document
/// (CsvHelper refuses a row whose field count differs from the header's), RFC 4180 quoting (a field with a comma,
/// quote, CR or LF is quoted, quotes doubled), CRLF after every record, invariant number formatting, and text that a
/// spreadsheet would run as a formula (starting with = + - @, tab or CR) prefixed with ' and quoted.
/// </summary>
public static class CsvDocument
{
    /// <summary>
    /// CRLF because RFC 4180 says so and the exports always ended records with it (StoredDatabaseFixtureTests holds
    /// them to the bytes an earlier daemon wrote). The formula guard is CsvHelper's own: it applies to text only,
    /// so a negative number written as a number stays a number (the hand-written guard had to parse to tell).
    /// </summary>
    public static readonly CsvWriterOptions Options = CsvWriterOptions.Default with
    {
        NewLine = "\r\n",
        Quoting = CsvQuoting.WhenNeeded,
        FormatProvider = System.Globalization.CultureInfo.InvariantCulture,
        Injection = CsvInjection.Escape,
        InjectionEscape = '\'',
    };

    /// <summary>The document: <paramref name="header"/>, then one record per row, each ended with CRLF.</summary>
    public static string Write(IReadOnlyList<string> header, IEnumerable<IReadOnlyList<CsvField>> rows)
    {
        using var text = new StringWriter(System.Globalization.CultureInfo.InvariantCulture);
        using (var csv = CsvWriter.Create(text, Options, leaveOpen: true))
        {
            csv.WriteHeader([.. header]);
            foreach (var row in rows)
            {
                foreach (var field in row)
                {
                    field.WriteTo(csv);
                }

                csv.EndRecord();
            }
        }

        return text.ToString();
    }
}
