using CsvHelper;

namespace IpcBench.Reports;

/// <summary>
/// One field: text, or a number CsvHelper formats itself. Numbers are kept apart from text so the formula guard
/// leaves a negative change_percent alone while it still guards a name like "-1+cmd".
/// </summary>
public readonly struct CsvField
{
    private enum Kind { Text, Real, Signed, Unsigned }

    private readonly Kind _kind;
    private readonly string? _text;
    private readonly double _real;
    private readonly long _signed;
    private readonly ulong _unsigned;

    private CsvField(Kind kind, string? text = null, double real = 0, long signed = 0, ulong unsigned = 0) =>
        (_kind, _text, _real, _signed, _unsigned) = (kind, text, real, signed, unsigned);

    public static implicit operator CsvField(string? text) => new(Kind.Text, text: text ?? string.Empty);

    public static implicit operator CsvField(double value) => new(Kind.Real, real: value);

    public static implicit operator CsvField(long value) => new(Kind.Signed, signed: value);

    public static implicit operator CsvField(ulong value) => new(Kind.Unsigned, unsigned: value);

    internal void WriteTo(CsvWriter csv)
    {
        switch (_kind)
        {
            // "R", as the hand-written writers formatted doubles: the exported bytes stay what earlier daemons wrote.
            case Kind.Real:
                csv.WriteField(_real, "R");
                break;
            case Kind.Signed:
                csv.WriteField(_signed, default);
                break;
            case Kind.Unsigned:
                csv.WriteField(_unsigned, default);
                break;
            default:
                csv.WriteField(_text);
                break;
        }
    }
}
