using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Health.V1;
using Grpc.Net.Client;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A real BenchDaemon process on a free loopback port (and a second one for /metrics) with a private runtime directory
/// and, unless the test brings its own, a scenario database of its own inside it (tests never see each other's
/// scenarios): started, waited for until it answers health checks, driven through gRPC, and on dispose stopped with
/// SIGTERM and, failing that, killed with its whole process tree. Everything it prints is kept, for failure messages.
/// </summary>
internal sealed class DaemonProcess : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan CallDeadline = TimeSpan.FromSeconds(40);

    private readonly Process _process;
    private readonly OutputLog _output;
    private readonly bool _ownsRuntimeBase;
    private bool _disposed;

    private DaemonProcess(Process process, OutputLog output, int port, int metricsPort, string runtimeBase, string databasePath, DaemonSettings settings)
    {
        _process = process;
        _output = output;
        _ownsRuntimeBase = settings.RuntimeBase is null;
        Port = port;
        MetricsPort = metricsPort;
        RuntimeBase = runtimeBase;
        DatabasePath = databasePath;
        Address = settings.ControlSocket is { } socket ? "unix:" + socket : $"127.0.0.1:{port}";
        Settings = settings;
        Channel = GrpcClients.Create(
            settings.ControlSocket is not null ? Address : (settings.TrustedCertificate is null ? "http://" : "https://") + Address,
            settings.Token is { } token ? $"Bearer {token}" : null,
            settings.TrustedCertificate);
        Control = new BenchControl.BenchControlClient(Channel);
    }

    /// <summary>How this daemon was started.</summary>
    public DaemonSettings Settings { get; }

    public int Pid => _process.Id;

    public int Port { get; }

    /// <summary>The port of GET /metrics (IpcBench:MetricsAddress=127.0.0.1:port), a free one per daemon.</summary>
    public int MetricsPort { get; }

    public Uri MetricsUrl => new($"http://127.0.0.1:{MetricsPort}/metrics");

    /// <summary>host:port of the control plane, as grpcurl takes it (unix:/path with <see cref="DaemonSettings.ControlSocket"/>).</summary>
    public string Address { get; }

    /// <summary>The IpcBench:RuntimeDirectory passed to the daemon; it keeps its sockets in <see cref="RuntimeDirectory"/>.</summary>
    public string RuntimeBase { get; }

    /// <summary>IpcBench:DatabasePath: the test's own file, or one inside <see cref="RuntimeBase"/> removed with it.</summary>
    public string DatabasePath { get; }

    /// <summary>BASE/PID: the daemon's own directory, which it must remove when it stops.</summary>
    public string RuntimeDirectory => Path.Combine(RuntimeBase, Pid.ToString());

    /// <summary>Prefix of the socket files .NET named pipes of this daemon create (names embed the owner pid).</summary>
    public string NamedPipePrefix => $"CoreFxPipe_ipcbench.{Pid}.";

    public GrpcChannel Channel { get; }

    /// <summary>The generated BenchControl client on <see cref="Channel"/>.</summary>
    public BenchControl.BenchControlClient Control { get; }

    public bool HasExited => _process.HasExited;

    public OutputLog Output => _output;

    /// <summary>Starts a daemon and returns once it answers health checks. <paramref name="configuration"/>: e.g. "--IpcBench:MaxPublishers=8".</summary>
    public static Task<DaemonProcess> StartAsync(params string[] configuration) => StartAsync(new Dictionary<string, string?>(), configuration);

    /// <summary>As <see cref="StartAsync(string[])"/>, with <paramref name="environment"/> set (null removes a variable).</summary>
    public static Task<DaemonProcess> StartAsync(IReadOnlyDictionary<string, string?> environment, params string[] configuration) =>
        StartAsync(new DaemonSettings { Environment = environment, Configuration = configuration });

    /// <summary>
    /// Starts a daemon that is expected to refuse to start (bad configuration) and returns its exit code and output.
    /// Fails if it serves instead.
    /// </summary>
    public static async Task<(int ExitCode, string Output)> StartExpectingRefusalAsync(DaemonSettings settings)
    {
        try
        {
            await using var daemon = await StartAsync(settings);
            throw new Xunit.Sdk.XunitException($"The daemon started although it should have refused.\n{daemon.Output.Describe()}");
        }
        catch (DaemonExitedException e)
        {
            return (e.ExitCode, e.Output);
        }
    }

    /// <summary>
    /// A daemon on <see cref="DaemonSettings.RuntimeBase"/> and <see cref="DaemonSettings.DatabasePath"/> when given (the
    /// test owns and removes them; a second daemon on the same ones is "the daemon restarted"), else on fresh private ones.
    /// </summary>
    public static async Task<DaemonProcess> StartAsync(DaemonSettings settings)
    {
        if (!File.Exists(RepoLayout.DaemonExecutable))
        {
            throw new FileNotFoundException($"The daemon was not built at {RepoLayout.DaemonExecutable}; build the solution ({RepoLayout.Configuration}).");
        }

        // A port picked by binding port 0 can be taken by someone else before the daemon binds it: try again then.
        for (int attempt = 1; ; attempt++)
        {
            int port = FreeLoopbackPort();
            int metricsPort = FreeLoopbackPort();
            var runtimeBase = settings.RuntimeBase ?? Path.Combine(Path.GetTempPath(), "ipcbench-tests", Guid.NewGuid().ToString("N")[..10]);
            Directory.CreateDirectory(runtimeBase);
            var databasePath = settings.DatabasePath ?? Path.Combine(runtimeBase, "scenarios.db");
            var output = new OutputLog();
            // A wrapper (prlimit, setpriv) execs the daemon in its own process, so the pid is the daemon's.
            var start = new ProcessStartInfo(settings.Wrapper.Count > 0 ? settings.Wrapper[0] : RepoLayout.DaemonExecutable)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
                WorkingDirectory = runtimeBase,
            };
            foreach (var argument in settings.Wrapper.Skip(1).Append(RepoLayout.DaemonExecutable).Where(_ => settings.Wrapper.Count > 0))
            {
                start.ArgumentList.Add(argument);
            }

            foreach (var argument in (string[])["serve", "--listen", settings.ControlSocket is { } controlSocket ? "unix:" + controlSocket : $"{settings.ListenHost}:{port}", $"--IpcBench:RuntimeDirectory={runtimeBase}",
                $"--IpcBench:MetricsAddress=127.0.0.1:{metricsPort}", $"--IpcBench:DatabasePath={databasePath}", .. settings.Configuration])
            {
                start.ArgumentList.Add(argument);
            }

            // A test daemon must not tell the test runner's systemd (if any) that it is ready or stopping.
            start.Environment.Remove("NOTIFY_SOCKET");
            // An IPCBENCH_CONTROL_TOKEN of whoever runs the tests must not leak into daemons that did not ask for one.
            start.Environment.Remove("IPCBENCH_CONTROL_TOKEN");
            foreach (var (name, value) in settings.Environment)
            {
                if (value is null)
                {
                    start.Environment.Remove(name);
                }
                else
                {
                    start.Environment[name] = value;
                }
            }

            var process = output.Start(start);
            var daemon = new DaemonProcess(process, output, port, metricsPort, runtimeBase, databasePath, settings);
            try
            {
                await daemon.WaitUntilServingAsync();
                return daemon;
            }
            catch (DaemonExitedException) when (attempt < 3 && output.Text.Contains("address already in use", StringComparison.OrdinalIgnoreCase))
            {
                await daemon.DisposeAsync();
            }
            catch
            {
                await daemon.DisposeAsync();
                throw;
            }
        }
    }

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }

    private async Task WaitUntilServingAsync()
    {
        var deadline = Stopwatch.StartNew();
        Exception? last = null;
        while (deadline.Elapsed < StartTimeout)
        {
            if (_process.HasExited)
            {
                _process.WaitForExit();
                throw new DaemonExitedException(_process.ExitCode, _output);
            }

            try
            {
                var health = await new Health.HealthClient(Channel).CheckAsync(new HealthCheckRequest(), deadline: DateTime.UtcNow.AddSeconds(2));
                if (health.Status == HealthCheckResponse.Types.ServingStatus.Serving)
                {
                    return;
                }

                last = new InvalidOperationException($"health status {health.Status}");
            }
            catch (RpcException e)
            {
                last = e;
            }

            await Task.Delay(100);
        }

        throw new TimeoutException($"The daemon did not answer health checks within {StartTimeout.TotalSeconds:0} s (last: {last?.Message}).\n{_output.Describe()}");
    }

    public async Task<IReadOnlyList<TransportInfo>> ListTransportsAsync() =>
        [.. (await Control.ListTransportsAsync(new(), deadline: Deadline())).Transports];

    /// <summary>Starts a scenario and returns the snapshot StartScenario answered with.</summary>
    public async Task<Scenario> StartScenarioAsync(ScenarioSpec spec)
    {
        var response = await Control.StartScenarioAsync(new() { Spec = spec }, deadline: Deadline());
        Assert.False(string.IsNullOrEmpty(response.Id), "StartScenario returned no id");
        Assert.Equal(response.Id, response.Scenario?.Id);
        return response.Scenario!;
    }

    public async Task<Scenario> GetScenarioAsync(string id) => await Control.GetScenarioAsync(new() { Id = id }, deadline: Deadline());

    public async Task<Scenario> StopScenarioAsync(string id) => await Control.StopScenarioAsync(new() { Id = id }, deadline: Deadline());

    public async Task<IReadOnlyList<Scenario>> ListScenariosAsync() =>
        [.. (await Control.ListScenariosAsync(new(), deadline: Deadline())).Scenarios];

    public async Task<ListScenariosResponse> ListScenariosAsync(ListScenariosRequest request) =>
        await Control.ListScenariosAsync(request, deadline: Deadline());

    public async Task<ExportScenariosResponse> ExportScenariosAsync(ExportScenariosRequest request) =>
        await Control.ExportScenariosAsync(request, deadline: Deadline());

    public async Task<CompareScenariosResponse> CompareScenariosAsync(CompareScenariosRequest request) =>
        await Control.CompareScenariosAsync(request, deadline: Deadline());

    public async IAsyncEnumerable<Scenario> WatchScenarioAsync(string id, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        using var call = Control.WatchScenario(new WatchScenarioRequest { Id = id }, cancellationToken: cancellationToken);
        while (await call.ResponseStream.MoveNext(cancellationToken))
        {
            yield return call.ResponseStream.Current;
        }
    }

    /// <summary>Starts a scenario and waits for its result.</summary>
    public async Task<Scenario> RunScenarioAsync(ScenarioSpec spec, TimeSpan? timeout = null)
    {
        var started = await StartScenarioAsync(spec);
        return await WaitUntilFinishedAsync(started.Id, timeout ?? DefaultTimeout(spec));
    }

    public Task<Scenario> WaitUntilFinishedAsync(string id, TimeSpan timeout) =>
        WaitForAsync(id, ScenarioStates.IsFinished, timeout, "to finish");

    public Task<Scenario> WaitForStateAsync(string id, ScenarioState state, TimeSpan timeout) =>
        WaitForAsync(id, s => s.State == state, timeout, $"to reach {state}");

    /// <summary>Polls GetScenario until <paramref name="condition"/> holds; a scenario that finishes otherwise fails the wait at once.</summary>
    public async Task<Scenario> WaitForAsync(string id, Func<Scenario, bool> condition, TimeSpan timeout, string what)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var scenario = await GetScenarioAsync(id);
            if (condition(scenario))
            {
                return scenario;
            }

            if (ScenarioStates.IsFinished(scenario) || clock.Elapsed > timeout)
            {
                throw new Xunit.Sdk.XunitException(
                    $"Scenario {id} did not get {what} within {timeout.TotalSeconds:0.#} s; it is {scenario.State}.\n{Describe(scenario)}");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>Live BenchAgent processes the daemon started.</summary>
    public IReadOnlyList<ProcessEntry> Agents() => [.. ProcessTree.Children(Pid).Where(p => p.IsAgent)];

    /// <summary>Sends SIGTERM and waits for the daemon to exit; false if it is still running after <paramref name="timeout"/>.</summary>
    public async Task<bool> TerminateAsync(TimeSpan timeout)
    {
        if (_process.HasExited)
        {
            return true;
        }

        ProcessTree.Signal(Pid, ProcessTree.SigTerm);
        using var wait = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(wait.Token);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>SIGKILL to the daemon alone, as a crash would: its agents are left to notice by themselves.</summary>
    public async Task KillAsync()
    {
        ProcessTree.Signal(Pid, ProcessTree.SigKill);
        using var wait = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await _process.WaitForExitAsync(wait.Token);
    }

    public int ExitCode => _process.ExitCode;

    /// <summary>Until disposed, everything the daemon prints from now on also goes to the test's output (shown when it fails).</summary>
    public IDisposable LogTo(ITestOutputHelper output) => new OutputForwarder(_output, output);

    /// <summary>A scenario as JSON, followed by the daemon's output: what a failing assertion should show.</summary>
    public string Describe(Scenario? scenario) =>
        (scenario is null ? string.Empty : "Scenario: " + JsonFormatter.Default.Format(scenario) + "\n") + _output.Describe();

    private static TimeSpan DefaultTimeout(ScenarioSpec spec) =>
        TimeSpan.FromSeconds(30) + (spec.Duration?.ToTimeSpan() ?? TimeSpan.Zero) + (spec.Warmup?.ToTimeSpan() ?? TimeSpan.Zero);

    private static DateTime Deadline() => DateTime.UtcNow + CallDeadline;

    public async ValueTask DisposeAsync()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        Channel.Dispose();
        try
        {
            // Agents outlive a killed daemon (they are reparented, then notice): remember them before it goes.
            var descendants = _process.HasExited ? [] : ProcessTree.Descendants(Pid);
            if (!await TerminateAsync(TimeSpan.FromSeconds(10)))
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync();
            }

            foreach (var leftover in descendants)
            {
                ProcessTree.SignalIfAlive(leftover, ProcessTree.SigKill);
            }
        }
        finally
        {
            // Also drains the output readers, so the log is complete.
            _process.WaitForExit(TimeSpan.FromSeconds(10));
            _process.Dispose();
            if (_ownsRuntimeBase)
            {
                try
                {
                    // The default database (and its -wal/-shm) lives in here too.
                    Directory.Delete(RuntimeBase, recursive: true);
                }
                catch (DirectoryNotFoundException)
                {
                }
            }
        }
    }

    private sealed class DaemonExitedException(int exitCode, OutputLog output)
        : Exception($"The daemon exited with code {exitCode} before it served.\n{output.Describe()}")
    {
        public int ExitCode { get; } = exitCode;

        public string Output { get; } = output.Text;
    }
}

/// <summary>How a <see cref="DaemonProcess"/> is started beyond the defaults (free loopback ports, private runtime directory).</summary>
internal sealed record DaemonSettings
{
    /// <summary>Arguments such as "--IpcBench:MaxPublishers=8", after the defaults so they win.</summary>
    public IReadOnlyList<string> Configuration { get; init; } = [];

    /// <summary>Environment variables to set (null removes one).</summary>
    public IReadOnlyDictionary<string, string?> Environment { get; init; } = new Dictionary<string, string?>();

    /// <summary>The host of --listen; the port is always a free one. Tests still connect over 127.0.0.1.</summary>
    public string ListenHost { get; init; } = "127.0.0.1";

    /// <summary>A Unix socket path for the control plane instead of a loopback port (--listen unix:PATH).</summary>
    public string? ControlSocket { get; init; }

    /// <summary>The bearer token <see cref="DaemonProcess.Channel"/> sends on every call.</summary>
    public string? Token { get; init; }

    /// <summary>Set when the daemon serves TLS: the channel speaks https and trusts this certificate.</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? TrustedCertificate { get; init; }

    /// <summary>IpcBench:RuntimeDirectory to use; null: a fresh private one, removed on dispose.</summary>
    public string? RuntimeBase { get; init; }

    /// <summary>IpcBench:DatabasePath to use; null: a fresh one inside the runtime directory.</summary>
    public string? DatabasePath { get; init; }

    /// <summary>A command that execs the daemon with its arguments appended, e.g. setpriv dropping a capability; empty: none.</summary>
    public IReadOnlyList<string> Wrapper { get; init; } = [];
}

/// <summary>Copies the daemon output of one test's lifetime into that test's output when the test ends.</summary>
internal sealed class OutputForwarder(OutputLog log, ITestOutputHelper output) : IDisposable
{
    private readonly int _from = log.Count;

    public void Dispose()
    {
        var lines = log.Lines(_from);
        output.WriteLine($"--- daemon output during this test ({lines.Count} lines) ---");
        foreach (var line in lines)
        {
            output.WriteLine(line);
        }
    }
}

/// <summary>A child process's command line, then everything it printed, stdout and stderr interleaved as they arrived.</summary>
internal sealed class OutputLog
{
    private readonly List<string> _lines = [];

    public Process Start(ProcessStartInfo start)
    {
        Add($"{start.FileName} {string.Join(' ', start.ArgumentList)}", "$");
        var process = new Process { StartInfo = start };
        process.OutputDataReceived += (_, e) => Add(e.Data, "out");
        process.ErrorDataReceived += (_, e) => Add(e.Data, "err");
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    public int Count
    {
        get
        {
            lock (_lines)
            {
                return _lines.Count;
            }
        }
    }

    public string Text => string.Join('\n', Lines(0));

    public IReadOnlyList<string> Lines(int from)
    {
        lock (_lines)
        {
            return _lines.Count > from ? _lines.GetRange(from, _lines.Count - from) : [];
        }
    }

    /// <summary>The last <paramref name="maxLines"/> lines, headed for a failure message.</summary>
    public string Describe(int maxLines = 200)
    {
        lock (_lines)
        {
            int from = Math.Max(0, _lines.Count - maxLines);
            return $"--- daemon output ({(from > 0 ? $"last {maxLines} of " : string.Empty)}{_lines.Count} lines) ---\n"
                + string.Join('\n', _lines.Skip(from)) + "\n--- end of daemon output ---";
        }
    }

    private void Add(string? line, string stream)
    {
        if (line is not null)
        {
            lock (_lines)
            {
                _lines.Add($"[{stream}] {line}");
            }
        }
    }
}
