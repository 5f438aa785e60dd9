using System.Diagnostics;
using System.Globalization;
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
internal sealed class DaemonProcess : DaemonClient, IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly bool _ownsRuntimeBase;
    private bool _disposed;

    private DaemonProcess(Process process, OutputLog output, int port, int metricsPort, string runtimeBase, string databasePath, DaemonSettings settings)
        : base(CreateChannel(settings, port), output)
    {
        _process = process;
        _ownsRuntimeBase = settings.RuntimeBase is null;
        Port = port;
        MetricsPort = metricsPort;
        RuntimeBase = runtimeBase;
        DatabasePath = databasePath;
        Address = settings.ControlSocket is { } socket ? "unix:" + socket : $"127.0.0.1:{port}";
        Settings = settings;
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

    public bool HasExited => _process.HasExited;

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
            RecordOwner(process.Id);
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

    private static GrpcChannel CreateChannel(DaemonSettings settings, int port)
    {
        var address = settings.ControlSocket is { } socket ? "unix:" + socket : $"127.0.0.1:{port}";
        return GrpcClients.Create(
            settings.ControlSocket is not null ? address : (settings.TrustedCertificate is null ? "http://" : "https://") + address,
            settings.Token is { } token ? $"Bearer {token}" : null,
            settings.TrustedCertificate);
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
                throw new DaemonExitedException(_process.ExitCode, Output);
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
            // A daemon still starting on a loaded machine can miss the 2 s deadline: with ThrowOperationCanceledOnCancellation,
            // Grpc.Net.Client may report that as an OperationCanceledException rather than DEADLINE_EXCEEDED. Not serving yet.
            catch (Exception e) when (e is RpcException or OperationCanceledException)
            {
                last = e;
            }

            await Task.Delay(100);
        }

        throw new TimeoutException($"The daemon did not answer health checks within {StartTimeout.TotalSeconds:0} s (last: {last?.Message}).\n{Output.Describe()}");
    }

    /// <summary>
    /// bench/test-cpu.sh's map from a daemon's pid to the test class (or fixture) that started it, so process accounting
    /// can charge each class its daemons' and their agents' CPU. Only when IPCBENCH_TEST_DAEMON_MAP names a file.
    /// </summary>
    private static void RecordOwner(int pid)
    {
        if (Environment.GetEnvironmentVariable("IPCBENCH_TEST_DAEMON_MAP") is not { Length: > 0 } map)
        {
            return;
        }

        // The synchronous part of the test's (or fixture's) call is still on the stack: its frame names the class.
        var owner = new StackTrace().GetFrames().Select(f => f.GetMethod()?.DeclaringType)
            .Select(t => t?.DeclaringType is { } outer && t.Name.StartsWith('<') ? outer : t)
            .FirstOrDefault(t => t is not null && t != typeof(DaemonProcess) && t.Namespace?.StartsWith("IpcBench.Daemon.Tests", StringComparison.Ordinal) == true);
        lock (MapLock)
        {
            string name = owner is null ? "unknown" : owner.DeclaringType is { } declaring ? $"{declaring.Name}.{owner.Name}" : owner.Name;
            File.AppendAllText(map, string.Create(CultureInfo.InvariantCulture, $"{pid} {name}\n"));
        }
    }

    private static readonly Lock MapLock = new();

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
