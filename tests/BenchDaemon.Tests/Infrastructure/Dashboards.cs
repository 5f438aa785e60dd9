using System.Text.Json;
using System.Text.RegularExpressions;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>A PromQL expression of a dashboard: a panel target or an annotation.</summary>
internal sealed record DashboardQuery(string Dashboard, string Where, string Expression, string? Unit)
{
    public override string ToString() => $"{Dashboard}: {Where}";
}

/// <summary>The Grafana dashboards under dashboards/, read as JSON, and Grafana's template variable syntax.</summary>
internal static partial class Dashboards
{
    public static string Directory => Path.Combine(RepoLayout.Root, "dashboards");

    public static IReadOnlyList<string> Files => [.. System.IO.Directory.GetFiles(Directory, "*.json").Order(StringComparer.Ordinal)];

    public static JsonDocument Load(string file) => JsonDocument.Parse(File.ReadAllText(file));

    /// <summary>Every panel, rows' nested panels included (rows themselves too).</summary>
    public static IEnumerable<JsonElement> Panels(JsonElement dashboard)
    {
        if (!dashboard.TryGetProperty("panels", out var panels))
        {
            yield break;
        }

        foreach (var panel in panels.EnumerateArray())
        {
            yield return panel;
            foreach (var nested in Panels(panel))
            {
                yield return nested;
            }
        }
    }

    /// <summary>Every PromQL expression: panel targets, then annotations.</summary>
    public static IReadOnlyList<DashboardQuery> Queries(string file)
    {
        using var json = Load(file);
        var name = Path.GetFileName(file);
        var queries = new List<DashboardQuery>();
        foreach (var panel in Panels(json.RootElement))
        {
            if (!panel.TryGetProperty("targets", out var targets))
            {
                continue;
            }

            var title = panel.GetProperty("title").GetString();
            var unit = panel.TryGetProperty("fieldConfig", out var fc) && fc.GetProperty("defaults").TryGetProperty("unit", out var u) ? u.GetString() : null;
            foreach (var target in targets.EnumerateArray())
            {
                if (target.TryGetProperty("expr", out var expr))
                {
                    queries.Add(new DashboardQuery(name, $"panel '{title}' target {target.GetProperty("refId").GetString()}", expr.GetString()!, unit));
                }
            }
        }

        foreach (var annotation in json.RootElement.GetProperty("annotations").GetProperty("list").EnumerateArray())
        {
            if (annotation.TryGetProperty("expr", out var expr))
            {
                queries.Add(new DashboardQuery(name, $"annotation '{annotation.GetProperty("name").GetString()}'", expr.GetString()!, null));
            }
        }

        return queries;
    }

    /// <summary>Query variables: name and the label_values(...) query.</summary>
    public static IReadOnlyList<(string Name, string Query)> VariableQueries(string file)
    {
        using var json = Load(file);
        var variables = new List<(string, string)>();
        foreach (var variable in json.RootElement.GetProperty("templating").GetProperty("list").EnumerateArray())
        {
            if (variable.GetProperty("type").GetString() == "query")
            {
                var query = variable.GetProperty("query");
                variables.Add((variable.GetProperty("name").GetString()!,
                    query.ValueKind == JsonValueKind.String ? query.GetString()! : query.GetProperty("query").GetString()!));
            }
        }

        return variables;
    }

    /// <summary>
    /// Replaces $name, ${name} and ${name:format} with <paramref name="values"/>; any variable without a value fails,
    /// so a dashboard cannot use one the test does not know about.
    /// </summary>
    public static string Substitute(string expression, IReadOnlyDictionary<string, string> values) =>
        VariablePattern().Replace(expression, m =>
        {
            var name = m.Groups[1].Success ? m.Groups[1].Value : m.Groups[3].Value;
            return values.TryGetValue(name, out var value)
                ? value
                : throw new Xunit.Sdk.XunitException($"'{expression}' uses ${name}, which the test does not substitute");
        });

    /// <summary>label_values(metric{...}, label) as PromQL: one series per value of the label.</summary>
    public static (string Expression, string Label) LabelValuesAsPromQL(string query)
    {
        var match = LabelValuesPattern().Match(query);
        Assert.True(match.Success, $"variable query '{query}' is not label_values(metric, label)");
        return ($"count by ({match.Groups[2].Value}) ({match.Groups[1].Value})", match.Groups[2].Value);
    }

    [GeneratedRegex(@"\$\{(\w+)(:\w+)?\}|\$(\w+)")]
    private static partial Regex VariablePattern();

    [GeneratedRegex(@"^label_values\((.+),\s*(\w+)\)$")]
    private static partial Regex LabelValuesPattern();
}
