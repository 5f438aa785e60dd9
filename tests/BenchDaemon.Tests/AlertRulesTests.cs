using System.Text.RegularExpressions;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;
using YamlDotNet.RepresentationModel;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// deploy/prometheus/alerts.yml: its unit tests pass promtool, every alert has a case in which it fires, and every
/// metric it reads is one the daemon exports (a renamed metric would leave an alert that can never fire).
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class AlertRulesTests(ITestOutputHelper output)
{
    [PrometheusFact]
    public async Task AlertRules_PassTheirPromtoolUnitTests()
    {
        PrometheusTools.EnsureInstalled();
        var (exitCode, text) = await PrometheusTools.PromtoolAsync(null, "test", "rules", DeployFiles.Repo("deploy", "prometheus", "alerts.test.yml"));
        output.WriteLine(text);
        Assert.True(exitCode == 0, $"promtool test rules exited {exitCode}:\n{text}");
        Assert.Contains("SUCCESS", text, StringComparison.Ordinal);
    }

    [Fact]
    public void EveryAlert_HasATestInWhichItFires()
    {
        var alerts = Rules().Select(r => r["alert"].ToString()).ToList();
        Assert.Equal(["IpcBenchMessagesLost", "IpcBenchSoakLeaking", "IpcBenchSoakDrifting", "IpcBenchScenarioStalled"], alerts);
        var firing = ((YamlSequenceNode)DeployFiles.LoadYaml("deploy", "prometheus", "alerts.test.yml")["tests"])
            .Cast<YamlMappingNode>()
            .SelectMany(t => ((YamlSequenceNode)t["alert_rule_test"]).Cast<YamlMappingNode>())
            .Where(c => c["exp_alerts"] is YamlSequenceNode { Children.Count: > 0 })
            .Select(c => c["alertname"].ToString())
            .ToHashSet();
        var silent = alerts.Where(a => !firing.Contains(a)).ToList();
        Assert.True(silent.Count == 0, "alerts no test sees firing: " + string.Join(", ", silent));
    }

    [Fact]
    public void EveryMetricAnAlertReads_IsOneTheDaemonExports()
    {
        var sources = string.Join('\n', new[] { "IpcBench.Metrics", "BenchDaemon" }
            .SelectMany(assembly => Directory.EnumerateFiles(DeployFiles.Repo("src", assembly, "Observability"), "*.cs")).Select(File.ReadAllText));
        var read = Rules().SelectMany(r => MetricName().Matches(r["expr"].ToString()).Select(m => m.Value)).Distinct().ToList();
        Assert.NotEmpty(read);
        var unknown = read.Where(name => !sources.Contains($"\"{name}\"", StringComparison.Ordinal)).ToList();
        Assert.True(unknown.Count == 0, "metrics the daemon does not export: " + string.Join(", ", unknown));
    }

    private static IEnumerable<YamlMappingNode> Rules() =>
        ((YamlSequenceNode)DeployFiles.LoadYaml("deploy", "prometheus", "alerts.yml")["groups"])
            .Cast<YamlMappingNode>()
            .SelectMany(g => ((YamlSequenceNode)g["rules"]).Cast<YamlMappingNode>());

    [GeneratedRegex(@"\bipcbench_[a-z0-9_]+")]
    private static partial Regex MetricName();
}
