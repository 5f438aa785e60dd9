using System.Globalization;
using System.Text;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// The Prometheus text exposition format 0.0.4 (prometheus-net is not on the NuGet mirror): families with one HELP and
/// one TYPE line each, samples grouped under their family, label values and help text escaped, floats as Go parses
/// them (+Inf, -Inf, NaN). Families are written in the order they are first used; a family's samples in the order added.
/// </summary>
public sealed class PrometheusExposition
{
    public const string ContentType = "text/plain; version=0.0.4; charset=utf-8";

    private readonly Dictionary<string, Family> _families = new(StringComparer.Ordinal);
    private readonly List<Family> _order = [];

    /// <summary>A monotonically increasing value; the name must end in _total.</summary>
    public void Counter(string name, string help, double value, params (string Name, string Value)[] labels)
    {
        if (!name.EndsWith("_total", StringComparison.Ordinal))
        {
            throw new ArgumentException($"counter {name} must end in _total", nameof(name));
        }

        Sample(name, "counter", help, name, value, labels);
    }

    public void Gauge(string name, string help, double value, params (string Name, string Value)[] labels) =>
        Sample(name, "gauge", help, name, value, labels);

    /// <summary>
    /// A histogram from cumulative counts at <paramref name="upperBounds"/> (ascending); the +Inf bucket is
    /// <paramref name="count"/>. Writes name_bucket{le=...}, name_sum and name_count.
    /// </summary>
    public void Histogram(string name, string help, ReadOnlySpan<double> upperBounds, ReadOnlySpan<long> cumulative, long count, double sum,
        params (string Name, string Value)[] labels)
    {
        if (cumulative.Length != upperBounds.Length)
        {
            throw new ArgumentException("one cumulative count per bound", nameof(cumulative));
        }

        var withLe = new (string Name, string Value)[labels.Length + 1];
        labels.CopyTo(withLe, 0);
        for (int i = 0; i < upperBounds.Length; i++)
        {
            withLe[^1] = ("le", FormatBound(upperBounds[i]));
            Sample(name, "histogram", help, name + "_bucket", cumulative[i], withLe);
        }

        withLe[^1] = ("le", "+Inf");
        Sample(name, "histogram", help, name + "_bucket", count, withLe);
        Sample(name, "histogram", help, name + "_sum", sum, labels);
        Sample(name, "histogram", help, name + "_count", count, labels);
    }

    /// <summary>
    /// Adds everything <paramref name="other"/> holds, family by family (its samples after this one's). Lets a block
    /// that never changes, such as a finished scenario's, be formatted once and reused by every later scrape.
    /// </summary>
    public void Append(PrometheusExposition other)
    {
        ArgumentNullException.ThrowIfNull(other);
        foreach (var family in other._order)
        {
            if (!_families.TryGetValue(family.Name, out var mine))
            {
                mine = new Family(family.Name, family.Type, family.Help);
                _families.Add(family.Name, mine);
                _order.Add(mine);
            }
            else if (mine.Type != family.Type)
            {
                throw new InvalidOperationException($"metric {family.Name} is a {mine.Type}, not a {family.Type}");
            }

            // By reference: the other block is not written to again, and a scrape copies nothing it does not send.
            mine.Appended.AddRange(family.Appended.Prepend(family.Text));
        }
    }

    public string Render()
    {
        using var writer = new StringWriter(CultureInfo.InvariantCulture);
        foreach (var family in _order)
        {
            writer.Write(family.Header);
            foreach (var part in family.Parts)
            {
                writer.Write(part);
            }
        }

        return writer.ToString();
    }

    /// <summary>Writes the exposition without building it as one string (a large one would land on the large object heap).</summary>
    public async Task WriteToAsync(TextWriter writer, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(writer);
        foreach (var family in _order)
        {
            await writer.WriteAsync(family.Header.AsMemory(), cancellationToken).ConfigureAwait(false);
            foreach (var part in family.Parts)
            {
                await writer.WriteAsync(part, cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private void Sample(string family, string type, string help, string sampleName, double value, (string Name, string Value)[] labels)
    {
        if (!_families.TryGetValue(family, out var f))
        {
            ValidateName(family);
            f = new Family(family, type, help);
            _families.Add(family, f);
            _order.Add(f);
        }
        else if (f.Type != type)
        {
            throw new InvalidOperationException($"metric {family} is a {f.Type}, not a {type}");
        }

        var line = f.Text;
        line.Append(sampleName);
        if (labels.Length > 0)
        {
            line.Append('{');
            for (int i = 0; i < labels.Length; i++)
            {
                if (i > 0)
                {
                    line.Append(',');
                }

                ValidateLabelName(labels[i].Name);
                line.Append(labels[i].Name).Append("=\"");
                AppendEscapedLabelValue(line, labels[i].Value);
                line.Append('"');
            }

            line.Append('}');
        }

        line.Append(' ').Append(FormatValue(value)).Append('\n');
    }

    public static string FormatValue(double value) => value switch
    {
        double.PositiveInfinity => "+Inf",
        double.NegativeInfinity => "-Inf",
        _ when double.IsNaN(value) => "NaN",
        // Whole numbers (every counter of messages and bytes) without exponent, up to 2^53 where doubles stop being exact.
        _ when value == Math.Floor(value) && Math.Abs(value) < 9007199254740992d => ((long)value).ToString(CultureInfo.InvariantCulture),
        _ => value.ToString("R", CultureInfo.InvariantCulture),
    };

    /// <summary>Bucket bounds as plain decimals (0.0000015, not 1.5E-06), stable from scrape to scrape.</summary>
    public static string FormatBound(double bound) =>
        double.IsPositiveInfinity(bound) ? "+Inf" : bound.ToString("0.###############", CultureInfo.InvariantCulture);

    private static void AppendEscapedHelp(StringBuilder text, string help)
    {
        foreach (char c in help)
        {
            _ = c switch
            {
                '\\' => text.Append(@"\\"),
                '\n' => text.Append(@"\n"),
                _ => text.Append(c),
            };
        }
    }

    private static void AppendEscapedLabelValue(StringBuilder text, string value)
    {
        foreach (char c in value)
        {
            _ = c switch
            {
                '\\' => text.Append(@"\\"),
                '\n' => text.Append(@"\n"),
                '"' => text.Append("\\\""),
                _ => text.Append(c),
            };
        }
    }

    private static void ValidateName(string name)
    {
        // [a-zA-Z_:][a-zA-Z0-9_:]*
        if (name.Length == 0 || !(char.IsAsciiLetter(name[0]) || name[0] is '_' or ':') || !name.All(c => char.IsAsciiLetterOrDigit(c) || c is '_' or ':'))
        {
            throw new ArgumentException($"'{name}' is not a valid metric name", nameof(name));
        }
    }

    private static void ValidateLabelName(string name)
    {
        // [a-zA-Z_][a-zA-Z0-9_]*, and names starting with __ are reserved.
        if (name.Length == 0 || !(char.IsAsciiLetter(name[0]) || name[0] == '_') || !name.All(c => char.IsAsciiLetterOrDigit(c) || c == '_')
            || name.StartsWith("__", StringComparison.Ordinal))
        {
            throw new ArgumentException($"'{name}' is not a valid label name", nameof(name));
        }
    }

    private sealed class Family(string name, string type, string help)
    {
        public string Name { get; } = name;

        public string Type { get; } = type;

        public string Help { get; } = help;

        /// <summary>This family's own samples.</summary>
        public StringBuilder Text { get; } = new();

        /// <summary>Samples of appended blocks, shared with them.</summary>
        public List<StringBuilder> Appended { get; } = [];

        public IEnumerable<StringBuilder> Parts => Appended.Prepend(Text);

        public string Header
        {
            get
            {
                var header = new StringBuilder("# HELP ").Append(Name).Append(' ');
                AppendEscapedHelp(header, Help);
                return header.Append("\n# TYPE ").Append(Name).Append(' ').Append(Type).Append('\n').ToString();
            }
        }
    }
}
