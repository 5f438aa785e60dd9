using IpcBench.Daemon.Core;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Tests.Infrastructure;
using k8s;
using k8s.Models;
using Xunit.Abstractions;
using YamlDotNet.RepresentationModel;
using static IpcBench.Daemon.Tests.Infrastructure.DeployFiles;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// How Prometheus finds the daemons beyond docker-compose: in a cluster (deploy/prometheus/kubernetes.yml, or
/// deploy/k8s/podmonitor.yaml with the Prometheus Operator) and on a list of lab machines (deploy/prometheus/lab.yml
/// and lab-targets.yml). Configurations pass promtool; which targets the relabelling keeps, and what it names them, is
/// worked out from the DaemonSet's own ports as Prometheus' pod discovery would present them.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class DeployFilesScrapeTests(ITestOutputHelper output)
{
    /// <summary>Fields of the PodMonitor CRD (monitoring.coreos.com/v1) at the levels we write; a misspelt or snake_case one is not among them.</summary>
    private static readonly Dictionary<string, string[]> PodMonitorFields = new(StringComparer.Ordinal)
    {
        ["."] = ["apiVersion", "kind", "metadata", "spec"],
        ["spec"] = ["selector", "namespaceSelector", "podMetricsEndpoints", "jobLabel", "podTargetLabels", "sampleLimit", "targetLimit", "attachMetadata", "scrapeClass"],
        ["endpoint"] = ["port", "portNumber", "path", "scheme", "params", "interval", "scrapeTimeout", "honorLabels", "honorTimestamps", "relabelings", "metricRelabelings", "filterRunning", "enableHttp2"],
        ["relabeling"] = ["sourceLabels", "separator", "targetLabel", "regex", "modulus", "replacement", "action"],
    };

    private static string ScrapeInterval() => ((YamlMappingNode)LoadYaml("deploy", "prometheus", "prometheus.yml")["global"])["scrape_interval"].ToString();

    private static V1DaemonSet DaemonSet() =>
        KubernetesYaml.LoadAllFromString(File.ReadAllText(Repo("deploy", "k8s", "daemonset.yaml")), typeMap: null, strict: true).OfType<V1DaemonSet>().Single();

    private static int MetricsPort(V1DaemonSet daemonSet) =>
        PortOf(daemonSet.Spec.Template.Spec.Containers.Single().Env.Single(e => e.Name == "IpcBench__MetricsAddress").Value);

    /// <summary>
    /// One target per declared container port of a daemon pod, with the labels Prometheus' pod role gives it.
    /// </summary>
    private static IEnumerable<Dictionary<string, string>> PodTargets(V1DaemonSet daemonSet, string phase)
    {
        var template = daemonSet.Spec.Template;
        foreach (var container in template.Spec.Containers)
        {
            foreach (var port in container.Ports)
            {
                var labels = new Dictionary<string, string>(StringComparer.Ordinal)
                {
                    ["__address__"] = $"10.1.2.3:{port.ContainerPort}",
                    ["__meta_kubernetes_namespace"] = "ipcbench",
                    ["__meta_kubernetes_pod_name"] = "ipcbench-x7k2p",
                    ["__meta_kubernetes_pod_node_name"] = "node-a",
                    ["__meta_kubernetes_pod_phase"] = phase,
                    ["__meta_kubernetes_pod_container_name"] = container.Name,
                    ["__meta_kubernetes_pod_container_port_name"] = port.Name ?? "",
                    ["__meta_kubernetes_pod_container_port_number"] = port.ContainerPort.ToString(System.Globalization.CultureInfo.InvariantCulture),
                };
                foreach (var (name, value) in template.Metadata.Labels)
                {
                    labels["__meta_kubernetes_pod_label_" + string.Concat(name.Select(c => char.IsAsciiLetterOrDigit(c) ? c : '_'))] = value;
                }

                yield return labels;
            }
        }
    }

    /// <summary>
    /// Debian's promtool is built without Kubernetes discovery and refuses kubernetes_sd_configs as an unknown field;
    /// there the rest of the file (relabelling, intervals, the other job) is checked with static_configs in its place.
    /// </summary>
    [PrometheusFact]
    public async Task KubernetesScrapeConfig_PassesPromtoolCheckConfig()
    {
        var path = Repo("deploy", "prometheus", "kubernetes.yml");
        var (exitCode, text) = await PrometheusTools.PromtoolAsync(null, "check", "config", path);
        output.WriteLine(text);
        if (exitCode != 0 && text.Contains("field kubernetes_sd_configs not found", StringComparison.Ordinal))
        {
            output.WriteLine("this promtool has no Kubernetes discovery: checking the file with static_configs in its place");
            var yaml = new YamlStream();
            using (var reader = new StreamReader(path))
            {
                yaml.Load(reader);
            }

            foreach (var job in ((YamlSequenceNode)((YamlMappingNode)yaml.Documents[0].RootNode)["scrape_configs"]).Children.Cast<YamlMappingNode>())
            {
                if (job.Children.Remove(new YamlScalarNode("kubernetes_sd_configs")))
                {
                    job.Add("static_configs", new YamlSequenceNode(new YamlMappingNode("targets", new YamlSequenceNode(new YamlScalarNode("10.1.2.3:9464")))));
                }
            }

            var copy = Path.Combine(Path.GetTempPath(), $"ipcbench-kubernetes-{Guid.NewGuid():N}.yml");
            try
            {
                await using (var writer = new StreamWriter(copy))
                {
                    yaml.Save(writer, assignAnchors: false);
                }

                (exitCode, text) = await PrometheusTools.PromtoolAsync(null, "check", "config", copy);
                output.WriteLine(text);
            }
            finally
            {
                File.Delete(copy);
            }
        }

        Assert.True(exitCode == 0, $"promtool check config exited {exitCode}:\n{text}");
    }

    /// <summary>
    /// Discovery asks for the DaemonSet's pods in the kustomization's namespace; of each running pod's targets (one
    /// per declared port) the metrics port's alone is kept, named after its node so its series outlive the pod.
    /// </summary>
    [Fact]
    public void KubernetesScrapeConfig_KeepsEachRunningDaemonsMetricsPort_NamedByItsNode()
    {
        var job = ((YamlSequenceNode)LoadYaml("deploy", "prometheus", "kubernetes.yml")["scrape_configs"]).Children.Cast<YamlMappingNode>()
            .Single(j => j["job_name"].ToString() == PrometheusServer.Job);
        Assert.Equal(MetricsEndpoint.Path, job["metrics_path"].ToString());
        var discovery = (YamlMappingNode)((YamlSequenceNode)job["kubernetes_sd_configs"]).Children.Single();
        Assert.Equal("pod", discovery["role"].ToString());
        var daemonSet = DaemonSet();
        Assert.Equal([LoadYaml("deploy", "k8s", "kustomization.yaml")["namespace"].ToString()], ((YamlMappingNode)discovery["namespaces"])["names"].Scalars());
        var selector = ((YamlMappingNode)((YamlSequenceNode)discovery["selectors"]).Children.Single())["label"].ToString().Split('=');
        Assert.Equal(selector[1], daemonSet.Spec.Template.Metadata.Labels[selector[0]]);

        var rules = PrometheusRelabel.Parse(job["relabel_configs"]);
        var kept = PodTargets(daemonSet, "Running").Select(t => PrometheusRelabel.Apply(rules, t)).OfType<Dictionary<string, string>>().ToList();
        var target = Assert.Single(kept);
        Assert.Equal($"10.1.2.3:{MetricsPort(daemonSet)}", target["__address__"]);
        Assert.Equal("node-a", target["instance"]);
        Assert.Empty(PodTargets(daemonSet, "Pending").Select(t => PrometheusRelabel.Apply(rules, t)).OfType<Dictionary<string, string>>());
    }

    [Fact]
    public void PodMonitor_ScrapesTheDaemonsMetricsPort_WithFieldsTheCrdKnows()
    {
        var monitor = LoadYaml("deploy", "k8s", "podmonitor.yaml");
        Assert.Equal("monitoring.coreos.com/v1", monitor["apiVersion"].ToString());
        Assert.Equal("PodMonitor", monitor["kind"].ToString());
        Assert.Equal(LoadYaml("deploy", "k8s", "kustomization.yaml")["namespace"].ToString(), ((YamlMappingNode)monitor["metadata"])["namespace"].ToString());
        var spec = (YamlMappingNode)monitor["spec"];
        AssertFields(monitor, ".");
        AssertFields(spec, "spec");

        var daemonSet = DaemonSet();
        var podLabels = daemonSet.Spec.Template.Metadata.Labels;
        var matchLabels = (YamlMappingNode)((YamlMappingNode)spec["selector"])["matchLabels"];
        Assert.NotEmpty(matchLabels.Children);
        Assert.All(matchLabels.Children, l => Assert.Equal(l.Value.ToString(), podLabels.TryGetValue(l.Key.ToString(), out var label) ? label : null));

        var endpoint = (YamlMappingNode)((YamlSequenceNode)spec["podMetricsEndpoints"]).Children.Single();
        AssertFields(endpoint, "endpoint");
        foreach (var rule in (endpoint.Get("relabelings") as YamlSequenceNode)?.Children ?? [])
        {
            AssertFields((YamlMappingNode)rule, "relabeling");
        }

        // The operator keeps the target of the named port; the relabelings then name it as kubernetes.yml does.
        var port = daemonSet.Spec.Template.Spec.Containers.Single().Ports.Single(p => p.Name == endpoint["port"].ToString());
        Assert.Equal(MetricsPort(daemonSet), port.ContainerPort);
        Assert.Equal(MetricsEndpoint.Path, endpoint["path"].ToString());
        Assert.Equal(ScrapeInterval(), endpoint["interval"].ToString());
        var target = PodTargets(daemonSet, "Running").Single(t => t["__meta_kubernetes_pod_container_port_name"] == port.Name);
        var relabelled = PrometheusRelabel.Apply(PrometheusRelabel.Parse(endpoint.Get("relabelings"), camelCase: true), target);
        Assert.Equal("node-a", relabelled?["instance"]);
    }

    /// <summary>promtool also parses the file_sd file the job names (strictly: a misspelt key fails), but only warns when it is missing.</summary>
    [PrometheusFact]
    public async Task LabScrapeConfig_PassesPromtool_WithItsTargetsFile()
    {
        var (exitCode, text) = await PrometheusTools.PromtoolAsync(null, "check", "config", Repo("deploy", "prometheus", "lab.yml"));
        output.WriteLine(text);
        Assert.True(exitCode == 0, $"promtool check config exited {exitCode}:\n{text}");
        Assert.DoesNotContain("WARNING", text, StringComparison.Ordinal);
    }

    /// <summary>Every group is one machine: a unique `machine` label and its daemon's metrics address.</summary>
    [Fact]
    public void LabTargets_NameEachMachine_OnceWithItsDaemonsMetricsPort()
    {
        var lab = LoadYaml("deploy", "prometheus", "lab.yml");
        var job = ((YamlSequenceNode)lab["scrape_configs"]).Children.Cast<YamlMappingNode>().Single(j => j["job_name"].ToString() == PrometheusServer.Job);
        var files = ((YamlMappingNode)((YamlSequenceNode)job["file_sd_configs"]).Children.Single())["files"].Scalars().ToList();
        Assert.Equal(["lab-targets.yml"], files);
        Assert.Equal(ScrapeInterval(), ((YamlMappingNode)lab["global"])["scrape_interval"].ToString());

        var yaml = new YamlStream();
        using (var reader = new StreamReader(Repo("deploy", "prometheus", files[0])))
        {
            yaml.Load(reader);
        }

        var groups = ((YamlSequenceNode)yaml.Documents[0].RootNode).Children.Cast<YamlMappingNode>().ToList();
        Assert.True(groups.Count >= 2, "an example of several machines");
        var machines = new HashSet<string>(StringComparer.Ordinal);
        int metricsPort = PortOf(new DaemonOptions().MetricsAddress);
        foreach (var group in groups)
        {
            var machine = ((YamlMappingNode)group["labels"])["machine"].ToString();
            Assert.True(machines.Add(machine), $"machine {machine} twice");
            var target = Assert.Single(group["targets"].Scalars());
            Assert.True(Uri.CheckHostName(target[..target.LastIndexOf(':')]) != UriHostNameType.Unknown && PortOf(target) == metricsPort,
                $"{machine}: {target} is not host:{metricsPort}");
        }
    }

    private static void AssertFields(YamlMappingNode node, string level)
    {
        var unknown = node.Children.Keys.Select(k => k.ToString()).Where(k => !PodMonitorFields[level].Contains(k)).ToList();
        Assert.True(unknown.Count == 0, $"podmonitor.yaml: {string.Join(", ", unknown)} not a PodMonitor field at {level}");
    }
}
