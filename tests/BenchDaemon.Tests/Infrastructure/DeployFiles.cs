using System.Diagnostics;
using IpcBench.Daemon.Core;
using YamlDotNet.RepresentationModel;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>What the DeployFiles* test classes share: paths in the repository, YAML documents, the daemon's option names.</summary>
internal static class DeployFiles
{
    public static string Repo(params string[] parts) => Path.Combine([RepoLayout.Root, .. parts]);

    /// <summary>The first document of a YAML file in the repository, as a mapping.</summary>
    public static YamlMappingNode LoadYaml(params string[] path)
    {
        var yaml = new YamlStream();
        using var reader = new StreamReader(Repo(path));
        yaml.Load(reader);
        return (YamlMappingNode)yaml.Documents[0].RootNode;
    }

    /// <summary>The node at <paramref name="key"/>, or null when the mapping has no such key.</summary>
    public static YamlNode? Get(this YamlMappingNode mapping, string key) =>
        mapping.Children.TryGetValue(new YamlScalarNode(key), out var value) ? value : null;

    public static IEnumerable<string> Scalars(this YamlNode? sequence) =>
        sequence is YamlSequenceNode items ? items.Children.Select(i => i.ToString()) : [];

    /// <summary>Every key is IpcBench__&lt;a property of DaemonOptions&gt;, the environment's spelling of a setting.</summary>
    public static void AssertDaemonOptions(IEnumerable<string> keys, string where)
    {
        var options = typeof(DaemonOptions).GetProperties().Select(p => p.Name).ToHashSet();
        foreach (var key in keys)
        {
            Assert.True(key.StartsWith(DaemonOptions.SectionName + "__", StringComparison.Ordinal) && options.Contains(key[(DaemonOptions.SectionName.Length + 2)..]),
                $"{where}: {key} is not an IpcBench option ({string.Join(", ", options)})");
        }
    }

    /// <summary>The port of a host:port address (IpcBench:ControlAddress, IpcBench:MetricsAddress).</summary>
    public static int PortOf(string address) => int.Parse(address[(address.LastIndexOf(':') + 1)..], System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>systemd-analyze where Debian puts it, or null on a machine without systemd.</summary>
    public static string? SystemdAnalyze => new[] { "/usr/bin/systemd-analyze", "/bin/systemd-analyze" }.FirstOrDefault(File.Exists);

    /// <summary>Runs a tool to its end (killed after 30 s); its exit code, standard output and standard error.</summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(string executable, params string[] arguments)
    {
        var start = new ProcessStartInfo(executable, arguments) { RedirectStandardError = true, RedirectStandardOutput = true };
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{executable} {string.Join(' ', arguments)} did not end within 30 s");
        }

        return (process.ExitCode, await stdout, await stderr);
    }
}
