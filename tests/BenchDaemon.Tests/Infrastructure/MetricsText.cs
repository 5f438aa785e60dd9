using System.Globalization;
using System.Text;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>One sample of a Prometheus text exposition.</summary>
internal sealed record MetricSample(string Name, IReadOnlyDictionary<string, string> Labels, double Value)
{
    public string Label(string name) => Labels.TryGetValue(name, out var value) ? value : string.Empty;

    public override string ToString() => Name + "{" + string.Join(",", Labels.Select(l => $"{l.Key}=\"{l.Value}\"")) + "} " + Value.ToString(CultureInfo.InvariantCulture);
}

/// <summary>
/// A strict reader of the text exposition format 0.0.4, independent of the daemon's writer: every family has one HELP
/// and one TYPE line before its samples, samples stay with their family, no series repeats, label values unescape.
/// Violations are collected in <see cref="Problems"/> rather than thrown, so a test can list them all.
/// </summary>
internal sealed class MetricsText
{
    private MetricsText(IReadOnlyList<MetricSample> samples, IReadOnlyDictionary<string, string> types, IReadOnlyList<string> problems)
    {
        Samples = samples;
        Types = types;
        Problems = problems;
    }

    public IReadOnlyList<MetricSample> Samples { get; }

    /// <summary>Family name → counter, gauge, histogram, ...</summary>
    public IReadOnlyDictionary<string, string> Types { get; }

    public IReadOnlyList<string> Problems { get; }

    public IEnumerable<MetricSample> Named(string name) => Samples.Where(s => s.Name == name);

    public IEnumerable<MetricSample> Of(string name, string scenario) => Named(name).Where(s => s.Label("scenario") == scenario);

    public static MetricsText Parse(string text)
    {
        var samples = new List<MetricSample>();
        var types = new Dictionary<string, string>();
        var helps = new HashSet<string>();
        var finished = new HashSet<string>();
        var series = new HashSet<string>();
        var problems = new List<string>();
        string? current = null;
        int number = 0;
        foreach (var line in text.Split('\n'))
        {
            number++;
            if (line.Length == 0)
            {
                continue;
            }

            if (line.StartsWith("# HELP ", StringComparison.Ordinal) || line.StartsWith("# TYPE ", StringComparison.Ordinal))
            {
                var parts = line[7..].Split(' ', 2);
                var family = parts[0];
                if (family != current)
                {
                    if (current is not null)
                    {
                        finished.Add(current);
                    }

                    if (finished.Contains(family))
                    {
                        problems.Add($"line {number}: family {family} appears twice");
                    }

                    current = family;
                }

                if (line[2] == 'H' && !helps.Add(family))
                {
                    problems.Add($"line {number}: second HELP for {family}");
                }

                if (line[2] == 'T')
                {
                    if (parts.Length < 2 || !types.TryAdd(family, parts[1]))
                    {
                        problems.Add($"line {number}: bad or second TYPE for {family}");
                    }
                    else if (samples.Any(s => FamilyOf(s.Name, types) == family))
                    {
                        problems.Add($"line {number}: TYPE of {family} after its samples");
                    }
                }

                continue;
            }

            if (line.StartsWith('#'))
            {
                continue;
            }

            if (!TryParseSample(line, out var sample, out var error))
            {
                problems.Add($"line {number}: {error}: {line}");
                continue;
            }

            var familyName = FamilyOf(sample.Name, types);
            if (familyName != current)
            {
                problems.Add($"line {number}: sample {sample.Name} outside its family's block (current: {current})");
            }

            if (!types.ContainsKey(familyName) || !helps.Contains(familyName))
            {
                problems.Add($"line {number}: {sample.Name} has no HELP and TYPE");
            }

            if (!series.Add(sample.ToString()[..sample.ToString().LastIndexOf(' ')]))
            {
                problems.Add($"line {number}: series repeated: {sample}");
            }

            samples.Add(sample);
        }

        return new MetricsText(samples, types, problems);
    }

    private static string FamilyOf(string sampleName, IReadOnlyDictionary<string, string> types)
    {
        foreach (var suffix in (string[])["_bucket", "_sum", "_count"])
        {
            if (sampleName.EndsWith(suffix, StringComparison.Ordinal)
                && types.TryGetValue(sampleName[..^suffix.Length], out var type) && type == "histogram")
            {
                return sampleName[..^suffix.Length];
            }
        }

        return sampleName;
    }

    private static bool TryParseSample(string line, out MetricSample sample, out string error)
    {
        sample = null!;
        int i = 0;
        while (i < line.Length && (char.IsAsciiLetterOrDigit(line[i]) || line[i] is '_' or ':'))
        {
            i++;
        }

        var name = line[..i];
        if (name.Length == 0 || char.IsAsciiDigit(name[0]))
        {
            error = "bad metric name";
            return false;
        }

        var labels = new Dictionary<string, string>();
        if (i < line.Length && line[i] == '{')
        {
            i++;
            while (line[i] != '}')
            {
                int start = i;
                while (char.IsAsciiLetterOrDigit(line[i]) || line[i] == '_')
                {
                    i++;
                }

                var label = line[start..i];
                if (label.Length == 0 || line[i] != '=' || line[i + 1] != '"')
                {
                    error = "bad label";
                    return false;
                }

                i += 2;
                var value = new StringBuilder();
                while (line[i] != '"')
                {
                    if (line[i] == '\\')
                    {
                        i++;
                        value.Append(line[i] switch
                        {
                            'n' => '\n',
                            '\\' => '\\',
                            '"' => '"',
                            _ => throw new FormatException($"bad escape \\{line[i]}"),
                        });
                    }
                    else
                    {
                        value.Append(line[i]);
                    }

                    i++;
                }

                i++;
                if (!labels.TryAdd(label, value.ToString()))
                {
                    error = $"label {label} repeated";
                    return false;
                }

                if (line[i] == ',')
                {
                    i++;
                }
            }

            i++;
        }

        if (i >= line.Length || line[i] != ' ')
        {
            error = "no value";
            return false;
        }

        var text = line[(i + 1)..];
        if (text.Contains(' ', StringComparison.Ordinal))
        {
            error = "timestamps are not expected";
            return false;
        }

        double value2 = text switch
        {
            "+Inf" => double.PositiveInfinity,
            "-Inf" => double.NegativeInfinity,
            "NaN" => double.NaN,
            _ when double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var v) => v,
            _ => double.MinValue,
        };
        if (value2 == double.MinValue)
        {
            error = "bad value";
            return false;
        }

        sample = new MetricSample(name, labels, value2);
        error = string.Empty;
        return true;
    }
}
