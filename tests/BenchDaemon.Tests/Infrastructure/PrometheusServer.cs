using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using YamlDotNet.RepresentationModel;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Where prometheus and promtool are (the Debian package: /usr/bin), and whether tests needing them may be skipped:
/// not under CI=true or IPCBENCH_REQUIRE_PROMETHEUS=1, where a missing binary is a failure that says how to install it.
/// </summary>
internal static class PrometheusTools
{
    public static readonly string? Prometheus = Find("prometheus");

    public static readonly string? Promtool = Find("promtool");

    public static bool Installed => Prometheus is not null && Promtool is not null;

    public static bool Required =>
        string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase)
        || Environment.GetEnvironmentVariable("IPCBENCH_REQUIRE_PROMETHEUS") == "1";

    public const string Missing = "prometheus and promtool are not installed (Debian/Ubuntu: apt-get install -y prometheus; .ci/run does this)";

    /// <summary>Fails the test, naming the install command, when the binaries are missing (only reached when required).</summary>
    public static void EnsureInstalled()
    {
        if (!Installed)
        {
            throw new Xunit.Sdk.XunitException($"{Missing}; required because CI=true or IPCBENCH_REQUIRE_PROMETHEUS=1.");
        }
    }

    /// <summary>Runs promtool; returns its exit code and everything it printed.</summary>
    public static async Task<(int ExitCode, string Output)> PromtoolAsync(string? stdin, params string[] arguments)
    {
        EnsureInstalled();
        var start = new ProcessStartInfo(Promtool!)
        {
            RedirectStandardInput = stdin is not null,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException("promtool did not start");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (stdin is not null)
        {
            await process.StandardInput.WriteAsync(stdin);
            process.StandardInput.Close();
        }

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        return (process.ExitCode, await stdout + await stderr);
    }

    private static string? Find(string name)
    {
        foreach (var directory in (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(':', StringSplitOptions.RemoveEmptyEntries).Append("/usr/bin"))
        {
            var path = Path.Combine(directory, name);
            if (File.Exists(path))
            {
                return path;
            }
        }

        return null;
    }
}

/// <summary>A fact that is skipped when prometheus/promtool are missing, unless CI=true or IPCBENCH_REQUIRE_PROMETHEUS=1.</summary>
public sealed class PrometheusFactAttribute : FactAttribute
{
    public PrometheusFactAttribute()
    {
        if (!PrometheusTools.Installed && !PrometheusTools.Required)
        {
            Skip = $"{PrometheusTools.Missing}; set IPCBENCH_REQUIRE_PROMETHEUS=1 to fail instead of skipping.";
        }
    }
}

/// <summary>
/// A real Prometheus on a free loopback port with its own TSDB in a temporary directory, scraping one daemon (or several) every
/// second with the job of deploy/prometheus/prometheus.yml; queried through its HTTP API; killed on dispose.
/// </summary>
internal sealed class PrometheusServer : IAsyncDisposable
{
    public const string Job = "ipcbench";

    private readonly Process _process;
    private readonly OutputLog _output;
    private readonly string _directory;
    private readonly HttpClient _http;
    private readonly int _targets;

    private PrometheusServer(Process process, OutputLog output, string directory, int port, int targets)
    {
        _targets = targets;
        _process = process;
        _output = output;
        _directory = directory;
        _http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}/"), Timeout = TimeSpan.FromSeconds(20) };
    }

    public OutputLog Output => _output;

    /// <summary>Starts Prometheus scraping 127.0.0.1:<paramref name="metricsPorts"/> (several: one instance each) and returns once it is ready.</summary>
    public static async Task<PrometheusServer> StartAsync(params int[] metricsPorts)
    {
        PrometheusTools.EnsureInstalled();
        for (int attempt = 1; ; attempt++)
        {
            var directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "prometheus-" + Guid.NewGuid().ToString("N")[..10]);
            Directory.CreateDirectory(directory);
            var config = Path.Combine(directory, "prometheus.yml");
            await File.WriteAllTextAsync(config, ScrapeConfig(metricsPorts));
            int port = FreeLoopbackPort();
            var start = new ProcessStartInfo(PrometheusTools.Prometheus!)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
                WorkingDirectory = directory,
            };
            foreach (var argument in (string[])[
                $"--config.file={config}",
                $"--storage.tsdb.path={Path.Combine(directory, "data")}",
                $"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=1h",
                "--log.level=warn"])
            {
                start.ArgumentList.Add(argument);
            }

            var output = new OutputLog();
            var server = new PrometheusServer(output.Start(start), output, directory, port, metricsPorts.Length);
            try
            {
                await server.WaitUntilReadyAsync();
                return server;
            }
            catch (Exception) when (attempt < 3 && output.Text.Contains("address already in use", StringComparison.OrdinalIgnoreCase))
            {
                await server.DisposeAsync();
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }
        }
    }

    /// <summary>
    /// deploy/prometheus/prometheus.yml with the test's settings: a 1 s scrape interval, the ipcbench job's target the
    /// test daemon, and no other jobs. Testing the shipped job (name, path) keeps the dashboards honest about it.
    /// </summary>
    private static string ScrapeConfig(IReadOnlyList<int> metricsPorts)
    {
        var yaml = new YamlStream();
        using (var reader = new StreamReader(Path.Combine(RepoLayout.Root, "deploy", "prometheus", "prometheus.yml")))
        {
            yaml.Load(reader);
        }

        var root = (YamlMappingNode)yaml.Documents[0].RootNode;
        var global = (YamlMappingNode)root.Children[new YamlScalarNode("global")];
        global.Children[new YamlScalarNode("scrape_interval")] = new YamlScalarNode("1s");
        global.Children[new YamlScalarNode("scrape_timeout")] = new YamlScalarNode("1s");
        global.Children[new YamlScalarNode("evaluation_interval")] = new YamlScalarNode("1s");
        var jobs = (YamlSequenceNode)root.Children[new YamlScalarNode("scrape_configs")];
        var job = jobs.Children.OfType<YamlMappingNode>().Single(j => j.Children[new YamlScalarNode("job_name")].ToString() == Job);
        var targets = (YamlMappingNode)((YamlSequenceNode)job.Children[new YamlScalarNode("static_configs")]).Children[0];
        targets.Children[new YamlScalarNode("targets")] = new YamlSequenceNode(metricsPorts.Select(p => (YamlNode)new YamlScalarNode($"127.0.0.1:{p}")));
        root.Children[new YamlScalarNode("scrape_configs")] = new YamlSequenceNode(job);

        using var writer = new StringWriter(CultureInfo.InvariantCulture);
        yaml.Save(writer, assignAnchors: false);
        return writer.ToString();
    }

    private async Task WaitUntilReadyAsync()
    {
        var clock = Stopwatch.StartNew();
        string last = "no answer";
        while (clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            if (_process.HasExited)
            {
                _process.WaitForExit();
                throw new InvalidOperationException($"prometheus exited with code {_process.ExitCode}.\n{_output.Describe()}");
            }

            try
            {
                using var response = await _http.GetAsync("-/ready");
                if (response.IsSuccessStatusCode)
                {
                    return;
                }

                last = $"HTTP {(int)response.StatusCode}";
            }
            catch (HttpRequestException e)
            {
                last = e.Message;
            }

            await Task.Delay(200);
        }

        throw new TimeoutException($"prometheus was not ready within 30 s ({last}).\n{_output.Describe()}");
    }

    /// <summary>Waits until every daemon's target has been scraped successfully.</summary>
    public async Task WaitForTargetUpAsync(TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var up = await QueryAsync($"up{{job=\"{Job}\"}}");
            if (up.Count(s => s.Value == 1) >= _targets)
            {
                return;
            }

            if (clock.Elapsed > timeout)
            {
                throw new TimeoutException($"Prometheus did not scrape the daemon successfully within {timeout.TotalSeconds:0} s: up = "
                    + $"{string.Join(", ", up.Select(s => s.Value))}; targets: {await GetStringAsync("api/v1/targets")}\n{_output.Describe()}");
            }

            await Task.Delay(250);
        }
    }

    /// <summary>An instant query (GET /api/v1/query) at <paramref name="time"/> (default: now).</summary>
    public async Task<IReadOnlyList<PromSample>> QueryAsync(string expression, DateTimeOffset? time = null)
    {
        var query = "api/v1/query?query=" + Uri.EscapeDataString(expression)
            + (time is { } t ? "&time=" + (t.ToUnixTimeMilliseconds() / 1000.0).ToString("0.###", CultureInfo.InvariantCulture) : string.Empty);
        using var json = await GetJsonAsync(query, expression);
        var data = json.RootElement.GetProperty("data");
        var type = data.GetProperty("resultType").GetString();
        var result = data.GetProperty("result");
        return type switch
        {
            "vector" => [.. result.EnumerateArray().Select(e => new PromSample(Labels(e), ParseValue(e.GetProperty("value")[1])))],
            "scalar" => [new PromSample(new Dictionary<string, string>(), ParseValue(result[1]))],
            _ => throw new InvalidOperationException($"unexpected result type {type} for {expression}"),
        };
    }

    /// <summary>A range query (GET /api/v1/query_range): every value of every series.</summary>
    public async Task<IReadOnlyList<PromSample>> QueryRangeAsync(string expression, DateTimeOffset from, DateTimeOffset to, TimeSpan step)
    {
        var query = FormattableString.Invariant(
            $"api/v1/query_range?query={Uri.EscapeDataString(expression)}&start={from.ToUnixTimeMilliseconds() / 1000.0:0.###}&end={to.ToUnixTimeMilliseconds() / 1000.0:0.###}&step={step.TotalSeconds:0.###}");
        using var json = await GetJsonAsync(query, expression);
        var samples = new List<PromSample>();
        foreach (var series in json.RootElement.GetProperty("data").GetProperty("result").EnumerateArray())
        {
            var labels = Labels(series);
            samples.AddRange(series.GetProperty("values").EnumerateArray().Select(v => new PromSample(labels, ParseValue(v[1]))));
        }

        return samples;
    }

    private async Task<JsonDocument> GetJsonAsync(string pathAndQuery, string expression)
    {
        using var response = await _http.GetAsync(pathAndQuery);
        var body = await response.Content.ReadAsStringAsync();
        if (!response.IsSuccessStatusCode)
        {
            throw new Xunit.Sdk.XunitException($"Prometheus refused {expression}: HTTP {(int)response.StatusCode} {body}");
        }

        return JsonDocument.Parse(body);
    }

    private async Task<string> GetStringAsync(string path)
    {
        try
        {
            return await _http.GetStringAsync(path);
        }
        catch (HttpRequestException e)
        {
            return e.Message;
        }
    }

    private static Dictionary<string, string> Labels(JsonElement series) =>
        series.GetProperty("metric").EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetString() ?? string.Empty);

    private static double ParseValue(JsonElement value) => value.GetString() switch
    {
        "+Inf" => double.PositiveInfinity,
        "-Inf" => double.NegativeInfinity,
        "NaN" => double.NaN,
        var text => double.Parse(text!, NumberStyles.Float, CultureInfo.InvariantCulture),
    };

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
            }
        }
        catch (InvalidOperationException)
        {
            // Exited meanwhile.
        }
        finally
        {
            _process.WaitForExit(TimeSpan.FromSeconds(5));
            _process.Dispose();
            try
            {
                Directory.Delete(_directory, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }
}

internal sealed record PromSample(IReadOnlyDictionary<string, string> Labels, double Value)
{
    public override string ToString() => "{" + string.Join(", ", Labels.Select(l => $"{l.Key}=\"{l.Value}\"")) + "} " + Value.ToString(CultureInfo.InvariantCulture);
}
