using System.Text.RegularExpressions;
using YamlDotNet.RepresentationModel;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Prometheus' target relabelling, the actions our configurations use (replace, keep, drop), applied to a target's
/// labels as Prometheus does: no kubelet, API server or Prometheus needed to see which targets a rule set keeps and
/// what they are called. Regexes are anchored at both ends; replacement expands $1 and ${1}.
/// </summary>
internal sealed record PrometheusRelabel(IReadOnlyList<string> SourceLabels, string Separator, string Pattern, string? TargetLabel, string Replacement, string Action)
{
    /// <summary>Rules as Prometheus writes them (source_labels, target_label) or as the Prometheus Operator does (sourceLabels, targetLabel).</summary>
    public static List<PrometheusRelabel> Parse(YamlNode? rules, bool camelCase = false)
    {
        string Key(string snake) => camelCase ? Regex.Replace(snake, "_([a-z])", m => m.Groups[1].Value.ToUpperInvariant()) : snake;
        return [.. (rules as YamlSequenceNode)?.Children.Cast<YamlMappingNode>().Select(rule => new PrometheusRelabel(
            [.. rule.Get(Key("source_labels")).Scalars()],
            rule.Get(Key("separator"))?.ToString() ?? ";",
            rule.Get(Key("regex"))?.ToString() ?? "(.*)",
            rule.Get(Key("target_label"))?.ToString(),
            rule.Get(Key("replacement"))?.ToString() ?? "$1",
            rule.Get(Key("action"))?.ToString() ?? "replace")) ?? []];
    }

    /// <summary>The target's labels after every rule, or null when a rule dropped it.</summary>
    public static Dictionary<string, string>? Apply(IEnumerable<PrometheusRelabel> rules, IReadOnlyDictionary<string, string> target)
    {
        var labels = new Dictionary<string, string>(target, StringComparer.Ordinal);
        foreach (var rule in rules)
        {
            var value = string.Join(rule.Separator, rule.SourceLabels.Select(l => labels.GetValueOrDefault(l, "")));
            var match = new Regex($"^(?:{rule.Pattern})$").Match(value);
            switch (rule.Action)
            {
                case "keep" when !match.Success:
                case "drop" when match.Success:
                    return null;
                case "keep" or "drop":
                    break;
                case "replace" when match.Success:
                    var replaced = match.Result(rule.Replacement);
                    if (replaced.Length == 0)
                    {
                        labels.Remove(rule.TargetLabel!);
                    }
                    else
                    {
                        labels[rule.TargetLabel!] = replaced;
                    }

                    break;
                case "replace":
                    break;
                default:
                    throw new NotSupportedException($"relabel action {rule.Action} is not simulated");
            }
        }

        return labels;
    }
}
