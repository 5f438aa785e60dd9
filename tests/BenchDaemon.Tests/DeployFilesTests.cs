using System.Diagnostics;
using System.Text.Json;
using System.Text.RegularExpressions;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;
using YamlDotNet.RepresentationModel;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The deployment files, checked without Docker or Grafana: they parse, name only files that exist, and agree with each
/// other and with the daemon's configuration (ports, option names, datasource uid, mount paths).
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class DeployFilesTests(ITestOutputHelper output)
{
    private const string DatasourceUid = "ipcbench-prometheus";

    /// <summary>Grafana unit ids the dashboards may use (Grafana's valueFormats registry).</summary>
    private static readonly HashSet<string> GrafanaUnits = ["mps", "Bps", "s", "percent", "percentunit", "bytes", "cps", "short", "none", "ops"];

    private static string Repo(params string[] parts) => DeployFiles.Repo(parts);

    [PrometheusFact]
    public async Task PrometheusConfig_PassesPromtoolCheckConfig()
    {
        PrometheusTools.EnsureInstalled();
        var (exitCode, text) = await PrometheusTools.PromtoolAsync(null, "check", "config", Repo("deploy", "prometheus", "prometheus.yml"));
        output.WriteLine(text);
        Assert.True(exitCode == 0, $"promtool check config exited {exitCode}:\n{text}");
    }

    [Fact]
    public void Dashboards_AreWellFormed_WithUnitsRateIntervalsVariablesAndAnnotations()
    {
        var failures = new List<string>();
        var uids = new HashSet<string>();
        var files = Dashboards.Files;
        Assert.Equal(["ipcbench-compare.json", "ipcbench.json"], files.Select(Path.GetFileName));
        foreach (var file in files)
        {
            var name = Path.GetFileName(file);
            using var json = Dashboards.Load(file);
            var root = json.RootElement;
            if (!uids.Add(root.GetProperty("uid").GetString()!))
            {
                failures.Add($"{name}: uid repeated");
            }

            var variables = root.GetProperty("templating").GetProperty("list").EnumerateArray().ToDictionary(v => v.GetProperty("name").GetString()!, v => v);
            string[] expected = name == "ipcbench.json" ? ["datasource", "instance", "scenario", "transport"] : ["datasource", "instance", "payload", "transport"];
            if (!variables.Keys.Order().SequenceEqual(expected.Order()))
            {
                failures.Add($"{name}: variables {string.Join(", ", variables.Keys)}, expected {string.Join(", ", expected)}");
            }

            if (variables.TryGetValue("datasource", out var ds) && (ds.GetProperty("type").GetString() != "datasource"
                || ds.GetProperty("query").GetString() != "prometheus" || ds.GetProperty("current").GetProperty("value").GetString() != DatasourceUid))
            {
                failures.Add($"{name}: $datasource must be a prometheus datasource variable defaulting to {DatasourceUid}");
            }

            var annotations = root.GetProperty("annotations").GetProperty("list").EnumerateArray().Where(a => a.TryGetProperty("expr", out _)).ToList();
            foreach (var (marker, what) in (ReadOnlySpan<(string, string)>)[("_start_time_seconds", "start"), ("_end_time_seconds", "end")])
            {
                if (!annotations.Any(a => a.GetProperty("expr").GetString()!.Contains(marker, StringComparison.Ordinal)
                    && a.GetProperty("useValueForTime").GetBoolean()))
                {
                    failures.Add($"{name}: no scenario {what} annotation");
                }
            }

            var ids = new HashSet<int>();
            foreach (var panel in Dashboards.Panels(root))
            {
                var title = panel.GetProperty("title").GetString();
                if (!ids.Add(panel.GetProperty("id").GetInt32()))
                {
                    failures.Add($"{name}: panel id of '{title}' repeated");
                }

                if (panel.GetProperty("type").GetString() == "row")
                {
                    continue;
                }

                var unit = panel.GetProperty("fieldConfig").GetProperty("defaults").TryGetProperty("unit", out var u) ? u.GetString() : null;
                if (unit is null || !GrafanaUnits.Contains(unit))
                {
                    failures.Add($"{name}: panel '{title}' has unit '{unit}'");
                }

                if (panel.GetProperty("datasource").GetProperty("uid").GetString() != "${datasource}")
                {
                    failures.Add($"{name}: panel '{title}' does not use $datasource");
                }

                if (!panel.TryGetProperty("description", out var description) || description.GetString()!.Length < 20)
                {
                    failures.Add($"{name}: panel '{title}' has no description");
                }

                foreach (var target in panel.GetProperty("targets").EnumerateArray())
                {
                    if (target.GetProperty("datasource").GetProperty("uid").GetString() != "${datasource}")
                    {
                        failures.Add($"{name}: a target of '{title}' does not use $datasource");
                    }
                }
            }

            foreach (var query in Dashboards.Queries(file))
            {
                foreach (Match range in RangeSelector().Matches(query.Expression))
                {
                    if (range.Groups[1].Value != "$__rate_interval")
                    {
                        failures.Add($"{query}: range [{range.Groups[1].Value}] instead of [$__rate_interval]");
                    }
                }

                // Suite progress carries no scenario or transport label (bounded: one series per daemon), so it cannot filter by them.
                if (name == "ipcbench.json" && query.Expression.Contains("ipcbench_", StringComparison.Ordinal) && !query.Expression.Contains("ipcbench_build_info", StringComparison.Ordinal)
                    && !SuiteSeriesOnly().IsMatch(query.Expression)
                    && !(query.Expression.Contains("$scenario", StringComparison.Ordinal) && query.Expression.Contains("$transport", StringComparison.Ordinal)))
                {
                    failures.Add($"{query}: does not filter by $scenario and $transport");
                }
            }
        }

        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    [Fact]
    public void GrafanaProvisioning_NamesTheComposePrometheus_AndTheMountedDashboards()
    {
        var datasources = DeployFiles.LoadYaml("deploy", "grafana", "provisioning", "datasources", "prometheus.yaml");
        var datasource = (YamlMappingNode)((YamlSequenceNode)datasources["datasources"]).Children.Single();
        Assert.Equal(DatasourceUid, datasource["uid"].ToString());
        Assert.Equal("prometheus", datasource["type"].ToString());
        var url = new Uri(datasource["url"].ToString());
        var compose = DeployFiles.LoadYaml("docker-compose.yml");
        var services = (YamlMappingNode)compose["services"];
        Assert.True(services.Children.ContainsKey(new YamlScalarNode(url.Host)), $"datasource host {url.Host} is not a compose service");
        Assert.Contains($"{url.Port}:{url.Port}", Ports(services, url.Host));
        // $__rate_interval is computed from this: it must be Prometheus' scrape interval.
        var prometheus = DeployFiles.LoadYaml("deploy", "prometheus", "prometheus.yml");
        Assert.Equal(((YamlMappingNode)prometheus["global"])["scrape_interval"].ToString(),
            ((YamlMappingNode)datasource["jsonData"])["timeInterval"].ToString());

        var providers = DeployFiles.LoadYaml("deploy", "grafana", "provisioning", "dashboards", "ipcbench.yaml");
        var provider = (YamlMappingNode)((YamlSequenceNode)providers["providers"]).Children.Single();
        Assert.Equal("file", provider["type"].ToString());
        var dashboardsPath = ((YamlMappingNode)provider["options"])["path"].ToString();
        var grafanaMounts = Volumes(services, "grafana");
        Assert.Contains(("./dashboards", dashboardsPath), grafanaMounts.Select(m => (m.Host, m.Container)));
        Assert.Contains(("./deploy/grafana/provisioning", "/etc/grafana/provisioning"), grafanaMounts.Select(m => (m.Host, m.Container)));
        var home = ((YamlMappingNode)((YamlMappingNode)services["grafana"])["environment"])["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"].ToString();
        Assert.StartsWith(dashboardsPath + "/", home, StringComparison.Ordinal);
        Assert.True(File.Exists(Repo("dashboards", home[(dashboardsPath.Length + 1)..])), $"home dashboard {home} is not in dashboards/");
    }

    [Fact]
    public void DockerCompose_BuildsAndMountsExistingFiles_AndPublishesTheDaemonsConfiguredPorts()
    {
        var compose = DeployFiles.LoadYaml("docker-compose.yml");
        var services = (YamlMappingNode)compose["services"];
        Assert.Equal(["daemon", "grafana", "prometheus"], services.Children.Keys.Select(k => k.ToString()).Order());

        var daemon = (YamlMappingNode)services["daemon"];
        var build = (YamlMappingNode)daemon["build"];
        var context = Path.GetFullPath(Path.Combine(RepoLayout.Root, build["context"].ToString()));
        Assert.True(Directory.Exists(context), $"build context {context}");
        Assert.True(File.Exists(Path.Combine(context, build["dockerfile"].ToString())), "the daemon's Dockerfile");

        foreach (var service in services.Children.Keys.Select(k => k.ToString()))
        {
            // Bind mounts only: named volumes (a name, not a path) are DeployFilesComposeTests'.
            foreach (var (host, container) in Volumes(services, service).Where(v => v.Host.StartsWith('.') || v.Host.StartsWith('/')))
            {
                var path = Path.Combine(RepoLayout.Root, host);
                Assert.True(File.Exists(path) || Directory.Exists(path), $"{service} mounts {host}, which does not exist");
                Assert.StartsWith("/", container, StringComparison.Ordinal);
            }
        }

        // The daemon listens on every interface, on the ports published; every IpcBench__ setting is a real option, and
        // the only other variable is the control token's.
        var environment = (YamlMappingNode)daemon["environment"];
        var settings = environment.Children.ToDictionary(e => e.Key.ToString(), e => e.Value.ToString());
        DeployFiles.AssertDaemonOptions(settings.Keys.Where(k => k != ControlPlaneSecurity.TokenVariable), "docker-compose.yml");
        Assert.Equal("0.0.0.0:50051", settings["IpcBench__ControlAddress"]);
        Assert.Equal("0.0.0.0:9464", settings["IpcBench__MetricsAddress"]);
        Assert.Equal(["50051:50051", "9464:9464"], Ports(services, "daemon").Order());
        Assert.True(daemon.Children.ContainsKey(new YamlScalarNode("shm_size")) && daemon["ipc"].ToString() is "private" or "shareable",
            "shared memory is sized (shm_size) in a private or shareable IPC namespace");

        // Prometheus scrapes the daemon service on its metrics port, with the configuration this repository ships.
        Assert.Contains(("./deploy/prometheus/prometheus.yml", "/etc/prometheus/prometheus.yml"), Volumes(services, "prometheus").Select(m => (m.Host, m.Container)));
        var prometheus = DeployFiles.LoadYaml("deploy", "prometheus", "prometheus.yml");
        var job = ((YamlSequenceNode)prometheus["scrape_configs"]).Children.OfType<YamlMappingNode>().Single(j => j["job_name"].ToString() == PrometheusServer.Job);
        var targets = ((YamlSequenceNode)((YamlMappingNode)((YamlSequenceNode)job["static_configs"]).Children[0])["targets"]).Children.Select(t => t.ToString()).ToList();
        Assert.Equal(["daemon:9464"], targets);
    }

    /// <summary>
    /// The compose daemon listens on every interface, so it must be given a token, and compose must refuse to start
    /// rather than hand it an empty one. Checked with the daemon's own validator, as it will judge these settings.
    /// </summary>
    [Fact]
    public void DockerCompose_WiresTheControlToken_SoTheDaemonAcceptsItsNonLoopbackAddress()
    {
        var services = (YamlMappingNode)DeployFiles.LoadYaml("docker-compose.yml")["services"];
        var environment = (YamlMappingNode)((YamlMappingNode)services["daemon"])["environment"];
        var settings = environment.Children.ToDictionary(e => e.Key.ToString(), e => e.Value.ToString());
        var options = new DaemonOptions
        {
            ControlAddress = settings["IpcBench__ControlAddress"],
            ControlTokenFile = settings.GetValueOrDefault("IpcBench__ControlTokenFile"),
        };
        Assert.False(ControlPlaneSecurity.IsLocalOnly(options.ControlAddress), "the compose daemon is meant to be reachable from the host");

        var token = settings.GetValueOrDefault(ControlPlaneSecurity.TokenVariable);
        Assert.True(token is not null || options.ControlTokenFile is not null,
            $"docker-compose.yml: the daemon listens on {options.ControlAddress} but gets neither {ControlPlaneSecurity.TokenVariable} nor IpcBench__ControlTokenFile");
        if (token is not null)
        {
            // ${VAR:?message}: compose stops with the message when the variable is unset or empty.
            Assert.Matches(new Regex($@"^\$\{{{ControlPlaneSecurity.TokenVariable}:\?[^}}]+\}}$"), token);
        }

        var validator = new ControlPlaneOptionsValidator(() => token is null ? null : "interpolated-by-compose");
        var result = validator.Validate(null, options);
        Assert.True(result.Succeeded, result.FailureMessage);
        var withoutToken = new ControlPlaneOptionsValidator(() => null).Validate(null, new DaemonOptions { ControlAddress = options.ControlAddress });
        Assert.True(withoutToken.Failed, "the same address without a token must be refused");
    }

    [Fact]
    public void Dockerfile_CopiesExistingPaths_AndConfiguresTheDaemonForTheContainer()
    {
        var lines = File.ReadAllLines(Repo("Dockerfile"));
        var joined = string.Join('\n', lines).Replace("\\\n", " ", StringComparison.Ordinal);
        var stages = StageName().Matches(joined).Select(m => m.Groups[1].Value).ToHashSet();
        Assert.Contains("native", stages);
        Assert.Contains("build", stages);
        foreach (Match copy in CopyInstruction().Matches(joined))
        {
            var from = copy.Groups[1].Value;
            var sources = copy.Groups[2].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries).SkipLast(1);
            if (from.Length > 0)
            {
                Assert.Contains(from, stages);
                continue;
            }

            foreach (var source in sources)
            {
                var path = Path.Combine(RepoLayout.Root, source);
                Assert.True(source == "." || File.Exists(path) || Directory.Exists(path), $"COPY {source}: not in the build context");
            }
        }

        foreach (Match project in PublishedProject().Matches(joined))
        {
            Assert.True(File.Exists(Repo(project.Groups[1].Value)), $"dotnet publish {project.Groups[1].Value}");
        }

        var environment = EnvAssignment().Matches(joined).ToDictionary(m => m.Groups[1].Value, m => m.Groups[2].Value);
        DeployFiles.AssertDaemonOptions(environment.Keys.Where(k => k.StartsWith("IpcBench__", StringComparison.Ordinal)), "Dockerfile");
        Assert.Equal("0.0.0.0:50051", environment["IpcBench__ControlAddress"]);
        Assert.Equal("0.0.0.0:9464", environment["IpcBench__MetricsAddress"]);
        Assert.Matches(new Regex(@"^EXPOSE 50051 9464$", RegexOptions.Multiline), joined);
        // 0.0.0.0 needs a token, and a token baked into an image is readable by everyone who can pull it: run time only.
        Assert.DoesNotContain(lines, l => !l.TrimStart().StartsWith('#') && l.Contains(ControlPlaneSecurity.TokenVariable, StringComparison.Ordinal));
        Assert.Contains("native/iceoryx2-ipcbench/target/release/", joined, StringComparison.Ordinal);
        Assert.Contains("/app/libe_sqlite3.so", joined, StringComparison.Ordinal);
    }

    [Fact]
    public async Task SystemdUnit_IsTypeNotify_WithTheDaemonsOptions_AndVerifies()
    {
        var unit = await File.ReadAllTextAsync(Repo("deploy", "systemd", "ipcbench.service"));
        Assert.Matches(new Regex(@"^Type=notify$", RegexOptions.Multiline), unit);
        Assert.Matches(new Regex(@"^KillMode=mixed$", RegexOptions.Multiline), unit);
        Assert.Matches(new Regex(@"^NoNewPrivileges=yes$", RegexOptions.Multiline), unit);
        Assert.Matches(new Regex(@"^ProtectSystem=strict$", RegexOptions.Multiline), unit);
        Assert.DoesNotMatch(new Regex(@"^(MemoryDenyWriteExecute|PrivateDevices)=(yes|true)", RegexOptions.Multiline), unit);
        var options = new Regex(@"^Environment=(IpcBench__\w+)=", RegexOptions.Multiline).Matches(unit).Select(m => m.Groups[1].Value).ToList();
        Assert.Contains("IpcBench__MetricsAddress", options);
        DeployFiles.AssertDaemonOptions(options, "ipcbench.service");

        // The commented-out exposure example must work once uncommented: real options, and every %d/credential loaded.
        var example = new Regex(@"^#Environment=(IpcBench__\w+)=", RegexOptions.Multiline).Matches(unit).Select(m => m.Groups[1].Value).ToList();
        Assert.Contains("IpcBench__ControlTokenFile", example);
        DeployFiles.AssertDaemonOptions(example, "ipcbench.service (commented example)");
        var loaded = new Regex(@"^#?LoadCredential=([\w-]+):", RegexOptions.Multiline).Matches(unit).Select(m => m.Groups[1].Value).ToHashSet();
        foreach (Match used in new Regex(@"%d/([\w-]+)").Matches(unit))
        {
            Assert.Contains(used.Groups[1].Value, loaded);
        }

        var analyze = new[] { "/usr/bin/systemd-analyze", "/bin/systemd-analyze" }.FirstOrDefault(File.Exists);
        if (analyze is null)
        {
            output.WriteLine("systemd-analyze not found: the unit was only checked textually");
            return;
        }

        // systemd-analyze verify wants ExecStart to exist; everything else is checked as written.
        var copy = Path.Combine(Path.GetTempPath(), $"ipcbench-{Guid.NewGuid():N}.service");
        await File.WriteAllTextAsync(copy, unit.Replace("ExecStart=/opt/ipcbench/BenchDaemon", "ExecStart=/bin/true", StringComparison.Ordinal));
        try
        {
            var start = new ProcessStartInfo(analyze, ["verify", copy]) { RedirectStandardError = true, RedirectStandardOutput = true };
            using var process = Process.Start(start)!;
            var stderr = await process.StandardError.ReadToEndAsync();
            var stdout = await process.StandardOutput.ReadToEndAsync();
            await process.WaitForExitAsync();
            // Unknown or misspelt settings are only warnings: fail on any message about the unit.
            var complaints = (stderr + stdout).Split('\n').Where(l => l.Contains(Path.GetFileName(copy), StringComparison.Ordinal)).ToList();
            Assert.True(process.ExitCode == 0 && complaints.Count == 0, $"systemd-analyze verify exited {process.ExitCode}:\n{stderr}{stdout}");
        }
        finally
        {
            File.Delete(copy);
        }
    }

    [Fact]
    public void BuildInfo_Iceoryx2Version_IsTheOneTheNativeBindingPins()
    {
        var cargo = File.ReadAllText(Repo("native", "iceoryx2-ipcbench", "Cargo.toml"));
        var pinned = new Regex(@"^iceoryx2\s*=\s*""=([0-9.]+)""", RegexOptions.Multiline).Match(cargo);
        Assert.True(pinned.Success, "Cargo.toml pins iceoryx2 with =x.y.z");
        Assert.Equal(BuildInfo.PinnedIceoryx2Version, pinned.Groups[1].Value);
    }

    private static List<string> Ports(YamlMappingNode services, string service) =>
        ((YamlMappingNode)services[service]).Children.TryGetValue(new YamlScalarNode("ports"), out var ports)
            ? [.. ((YamlSequenceNode)ports).Children.Select(p => p.ToString())]
            : [];

    private static List<(string Host, string Container)> Volumes(YamlMappingNode services, string service)
    {
        if (!((YamlMappingNode)services[service]).Children.TryGetValue(new YamlScalarNode("volumes"), out var volumes))
        {
            return [];
        }

        return [.. ((YamlSequenceNode)volumes).Children.Select(v => v.ToString().Split(':')).Select(p => (p[0], p[1]))];
    }

    [GeneratedRegex(@"\[([^\]]+)\]")]
    private static partial Regex RangeSelector();

    /// <summary>Every ipcbench_ series the expression names is an ipcbench_suite_ one.</summary>
    [GeneratedRegex(@"^(?:(?!ipcbench_(?!suite_))[\s\S])*$")]
    private static partial Regex SuiteSeriesOnly();

    [GeneratedRegex(@"^FROM \S+ AS (\w+)$", RegexOptions.Multiline)]
    private static partial Regex StageName();

    [GeneratedRegex(@"^COPY (?:--from=(\w+) )?(.+)$", RegexOptions.Multiline)]
    private static partial Regex CopyInstruction();

    [GeneratedRegex(@"dotnet publish (\S+\.csproj)")]
    private static partial Regex PublishedProject();

    [GeneratedRegex(@"(IpcBench__\w+|DOTNET_\w+)=(\S+)")]
    private static partial Regex EnvAssignment();
}
