using System.Text.RegularExpressions;
using IpcBench.Daemon.Cli;
using IpcBench.Daemon.Tests.Infrastructure;
using YamlDotNet.RepresentationModel;
using static IpcBench.Daemon.Tests.Infrastructure.DeployFiles;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// docker-compose.yml's start-up order and state, without Docker: every service has a healthcheck its image can run,
/// a service starts only after what it depends on is healthy, and the scenario database, Prometheus' series and
/// Grafana's database live in named volumes the images can write.
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class DeployFilesComposeTests
{
    private static YamlMappingNode Compose() => LoadYaml("docker-compose.yml");

    private static YamlMappingNode Service(string name) => (YamlMappingNode)((YamlMappingNode)Compose()["services"])[name];

    private static Dictionary<string, string> Environment(string service) =>
        ((YamlMappingNode?)Service(service).Get("environment"))?.Children.ToDictionary(e => e.Key.ToString(), e => e.Value.ToString()) ?? [];

    /// <summary>Mounts of a service whose source is a volume name rather than a path.</summary>
    private static List<(string Volume, string Path)> NamedVolumes(string service) =>
        [.. Service(service).Get("volumes").Scalars().Select(v => v.Split(':')).Where(p => !p[0].StartsWith('.') && !p[0].StartsWith('/')).Select(p => (p[0], p[1]))];

    private static TimeSpan Duration(string text)
    {
        Assert.Matches(ComposeDuration(), text);
        return TimeSpan.FromMilliseconds(DurationPart().Matches(text).Sum(m => double.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture) * m.Groups[2].Value switch
        {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            _ => 3_600_000,
        }));
    }

    /// <summary>
    /// Exec form (no shell in the image needed, nothing interpolated), a timeout within the interval, and a command the
    /// image has: the daemon's own `health` subcommand (its arguments parse, and it asks the configured control port on
    /// loopback), busybox wget in the Prometheus and Grafana images, asking the port each listens on.
    /// </summary>
    [Fact]
    public void EveryService_HasAHealthcheck_ItsImageCanRun()
    {
        foreach (var name in ((YamlMappingNode)Compose()["services"]).Children.Keys.Select(k => k.ToString()))
        {
            var check = Service(name).Get("healthcheck") as YamlMappingNode;
            Assert.True(check is not null, $"{name} has no healthcheck");
            var test = check["test"].Scalars().ToList();
            Assert.Equal("CMD", test[0]);
            Assert.True(Duration(check["timeout"].ToString()) < Duration(check["interval"].ToString()), $"{name}: timeout not within the interval");
            Assert.True(Duration(check["start_period"].ToString()) > TimeSpan.Zero);
            Assert.InRange(int.Parse(check["retries"].ToString(), System.Globalization.CultureInfo.InvariantCulture), 1, 10);

            if (name == "daemon")
            {
                var entrypoint = Entrypoint().Match(File.ReadAllText(Repo("Dockerfile"))).Groups[1].Value;
                int at = test.IndexOf(entrypoint);
                Assert.True(at > 0, $"the daemon's healthcheck does not run the image's {entrypoint}");
                Assert.All(test[1..at], t => Assert.Matches(@"^(env|[A-Za-z_]+=\S+)$", t));
                var arguments = test[(at + 1)..];
                Assert.Equal("health", arguments[0]);
                Assert.Empty(DaemonCommandLine.Parse(arguments).Errors);
                var target = HealthCommand.Target(arguments[arguments.IndexOf("--address") + 1]);
                Assert.True(target is { IsLoopback: true }, $"{target}: the check runs in the container");
                Assert.Equal(PortOf(Environment("daemon")["IpcBench__ControlAddress"]), target!.Port);
                var seconds = double.Parse(arguments[arguments.IndexOf("--timeout") + 1], System.Globalization.CultureInfo.InvariantCulture);
                Assert.True(TimeSpan.FromSeconds(seconds) < Duration(check["timeout"].ToString()), "the command's own deadline must come before Docker's");
            }
            else
            {
                Assert.Equal("wget", test[1]);
                var url = new Uri(test[^1]);
                Assert.True(url.IsLoopback, $"{name}: {url}");
                Assert.Contains($"{url.Port}:{url.Port}", Service(name).Get("ports").Scalars());
            }
        }
    }

    /// <summary>The long form with service_healthy: the short form waits only for the container to start.</summary>
    [Fact]
    public void DependsOn_WaitsUntilTheDependencyIsHealthy()
    {
        var order = new List<(string Service, string Dependency)>();
        foreach (var (name, node) in ((YamlMappingNode)Compose()["services"]).Children.Select(c => (c.Key.ToString(), (YamlMappingNode)c.Value)))
        {
            if (node.Get("depends_on") is not { } dependsOn)
            {
                continue;
            }

            var dependencies = Assert.IsType<YamlMappingNode>(dependsOn);
            foreach (var (dependency, condition) in dependencies.Children.Select(d => (d.Key.ToString(), (YamlMappingNode)d.Value)))
            {
                Assert.Equal("service_healthy", condition["condition"].ToString());
                Assert.NotNull(Service(dependency).Get("healthcheck"));
                order.Add((name, dependency));
            }
        }

        Assert.Equal([("grafana", "prometheus"), ("prometheus", "daemon")], order.Order());
    }

    /// <summary>
    /// Every named volume is declared and used; each holds what outlives a container: the daemon's scenario database
    /// (the directory of IpcBench__DatabasePath, which the image creates for its user so a new volume is writable),
    /// Prometheus' TSDB (the image's storage path) and Grafana's data directory.
    /// </summary>
    [Fact]
    public void NamedVolumes_HoldTheScenarioDatabase_PrometheusSeries_AndGrafanaData()
    {
        var declared = ((YamlMappingNode)Compose()["volumes"]).Children.Keys.Select(k => k.ToString()).Order().ToList();
        var used = new[] { "daemon", "prometheus", "grafana" }.SelectMany(s => NamedVolumes(s).Select(v => v.Volume)).ToList();
        Assert.Equal(declared, used.Order());
        Assert.Equal(used.Count, used.Distinct().Count());

        var database = Environment("daemon")["IpcBench__DatabasePath"];
        var directory = database[..database.LastIndexOf('/')];
        Assert.Equal(directory, Assert.Single(NamedVolumes("daemon")).Path);
        // The image's storage path (--storage.tsdb.path=/prometheus in its default command) and Grafana's GF_PATHS_DATA.
        Assert.Null(Service("prometheus").Get("command"));
        Assert.Equal("/prometheus", Assert.Single(NamedVolumes("prometheus")).Path);
        Assert.False(Environment("grafana").ContainsKey("GF_PATHS_DATA"));
        Assert.Equal("/var/lib/grafana", Assert.Single(NamedVolumes("grafana")).Path);

        // The Dockerfile makes that directory its user's before switching to it, and sets the same database path.
        var dockerfile = File.ReadAllLines(Repo("Dockerfile"));
        int created = Array.FindIndex(dockerfile, l => l.StartsWith("RUN ", StringComparison.Ordinal) && l.Contains($"mkdir -p {directory}", StringComparison.Ordinal)
            && l.Contains($"chown \"$APP_UID\" {directory}", StringComparison.Ordinal));
        int user = Array.FindIndex(dockerfile, l => l.StartsWith("USER ", StringComparison.Ordinal));
        Assert.True(created >= 0 && created < user, $"the Dockerfile does not create {directory} for $APP_UID before USER");
        Assert.Contains(dockerfile, l => l.Trim().TrimEnd('\\').Trim() == $"IpcBench__DatabasePath={database}");
    }

    [GeneratedRegex(@"^(\d+(ms|s|m|h))+$")]
    private static partial Regex ComposeDuration();

    [GeneratedRegex(@"(\d+)(ms|s|m|h)")]
    private static partial Regex DurationPart();

    [GeneratedRegex(@"^ENTRYPOINT \[""([^""]+)""", RegexOptions.Multiline)]
    private static partial Regex Entrypoint();
}
