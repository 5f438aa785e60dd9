using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using Grpc.Net.Client;
using IpcBench.V1;

namespace IpcBench.Soak;

public sealed class SoakSetupException(string message) : Exception(message);

/// <summary>
/// One soak: a daemon of its own (private runtime directory and ports), an ALL_TO_ALL scenario (2:4 unless told) per transport, a
/// sample a second of the scenario's rate and of the daemon's and agents' memory and descriptors, then the verdict.
/// </summary>
public sealed partial class SoakSession : IAsyncDisposable
{
    private static readonly TimeSpan SampleInterval = TimeSpan.FromSeconds(1);

    private readonly SoakOptions _options;
    private readonly TextWriter _progress;
    private readonly Process _daemon;
    private readonly string _runtimeBase;
    private readonly string _logPath;
    private readonly GrpcChannel _channel;
    private readonly BenchControl.BenchControlClient _control;
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromSeconds(10) };
    private readonly Uri _metricsUrl;
    private readonly Stopwatch _clock = Stopwatch.StartNew();

    private SoakSession(SoakOptions options, TextWriter progress, Process daemon, string runtimeBase, string logPath, string address, Uri metricsUrl)
    {
        _options = options;
        _progress = progress;
        _daemon = daemon;
        _runtimeBase = runtimeBase;
        _logPath = logPath;
        _channel = GrpcChannel.ForAddress(address.Contains("://", StringComparison.Ordinal) ? address : "http://" + address);
        _control = new BenchControl.BenchControlClient(_channel);
        _metricsUrl = metricsUrl;
    }

    public static async Task<SoakSession> StartAsync(SoakOptions options, TextWriter progress)
    {
        if (!File.Exists(options.DaemonPath))
        {
            throw new SoakSetupException($"the daemon is not at {options.DaemonPath}; build it (dotnet build -c Release) or pass --daemon");
        }

        int port = FreeLoopbackPort();
        int metricsPort = FreeLoopbackPort();
        var runtimeBase = Directory.CreateTempSubdirectory("ipcbench-soak.").FullName;
        var logPath = Path.Combine(runtimeBase, "daemon.log");
        var start = new ProcessStartInfo(options.DaemonPath)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = runtimeBase,
        };
        foreach (var argument in (string[])["serve", "--listen", $"127.0.0.1:{port}",
            $"--IpcBench:RuntimeDirectory={runtimeBase}", $"--IpcBench:MetricsAddress=127.0.0.1:{metricsPort}",
            "--IpcBench:MaxConcurrentScenarios=16", $"--IpcBench:DatabasePath={Path.Combine(runtimeBase, Probes.DatabaseFile)}"])
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment.Remove("NOTIFY_SOCKET");
        var daemon = Process.Start(start) ?? throw new SoakSetupException($"could not start {options.DaemonPath}");
        var log = new StreamWriter(logPath) { AutoFlush = true };
        daemon.OutputDataReceived += (_, e) => WriteLog(log, e.Data);
        daemon.ErrorDataReceived += (_, e) => WriteLog(log, e.Data);
        daemon.BeginOutputReadLine();
        daemon.BeginErrorReadLine();

        var session = new SoakSession(options, progress, daemon, runtimeBase, logPath, $"127.0.0.1:{port}", new Uri($"http://127.0.0.1:{metricsPort}/metrics"));
        try
        {
            await session.WaitUntilServingAsync();
            return session;
        }
        catch
        {
            await session.DisposeAsync();
            throw;
        }
    }

    private static void WriteLog(StreamWriter log, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (log)
        {
            log.WriteLine(line);
        }
    }

    public async Task<SoakReport> RunAsync()
    {
        var available = (await _control.ListTransportsAsync(new(), deadline: Deadline())).Transports;
        var transports = _options.Transports.Count > 0 ? _options.Transports : [.. available.Where(t => t.Available).Select(t => t.Id)];
        foreach (var id in transports)
        {
            var info = available.FirstOrDefault(t => t.Id == id)
                ?? throw new ArgumentException($"--transports: unknown transport '{id}'; known: {string.Join(", ", available.Select(t => t.Id))}");
            if (!info.Available)
            {
                throw new ArgumentException($"--transports: '{id}' is unavailable here: {info.UnavailableReason}");
            }
        }

        await PrimeAsync(transports.Distinct());
        // The baseline after priming, one scrape and a call, so the soak's own connections are already open in it.
        await ScrapeAsync();
        var before = MachineSample.Take(_daemon.Id);
        Progress($"daemon pid {_daemon.Id}: {before.DaemonDescriptors} fds, {Mib(before.DaemonResidentBytes)} RSS; /dev/shm {Mib(before.SharedMemoryUsedBytes)} used");

        var results = new List<TransportResult>();
        bool CrossProcess(string id) => available.First(t => t.Id == id).CrossProcess;
        if (_options.Parallel)
        {
            var trackers = new List<ScenarioTracker>();
            foreach (var transport in transports)
            {
                trackers.Add(await StartScenarioAsync(transport, CrossProcess(transport)));
            }

            var heaps = await SoakAsync(trackers);
            await SettleAsync(before.DaemonDescriptors);
            results.AddRange(trackers.Select(t => t.Result(MachineSample.Take(_daemon.Id), heaps, _daemon.Id)));
        }
        else
        {
            foreach (var transport in transports)
            {
                var tracker = await StartScenarioAsync(transport, CrossProcess(transport));
                var heaps = await SoakAsync([tracker]);
                await SettleAsync(before.DaemonDescriptors);
                var result = tracker.Result(MachineSample.Take(_daemon.Id), heaps, _daemon.Id);
                results.Add(result);
                Progress($"{transport}: {result.State}, first tenth {Rate(result.FirstTenthMessagesPerSecond)}, last tenth {Rate(result.LastTenthMessagesPerSecond)}, lost {result.Lost}");
            }
        }

        var after = MachineSample.Take(_daemon.Id);
        return new SoakReport(_options, _daemon.Id, before, after, Probes.RingFilesOf(_daemon.Id), AgentsLeft(), results);
    }

    /// <summary>
    /// A short 1:1 scenario per transport before the baseline: the first use of a transport creates process-wide
    /// things once (thread-pool I/O threads, epoll and futex wait machinery, native libraries: 2–6 descriptors seen),
    /// which are not growth. Each with the soak's own wait strategy and rate, so the machinery primed is the one the soak
    /// then uses, and no warmup, since nothing of it is measured; all at once when the soak runs its transports at once
    /// (they were one after another, closed loop after the default warmup: 20 of the 74 s of SoakTests' short soak).
    /// </summary>
    private async Task PrimeAsync(IEnumerable<string> transports)
    {
        if (_options.Parallel)
        {
            await Task.WhenAll(transports.Select(PrimeAsync));
        }
        else
        {
            foreach (var transport in transports)
            {
                await PrimeAsync(transport);
            }
        }

        await SettleAsync();
        Progress($"primed {string.Join(", ", transports)}");
    }

    private async Task PrimeAsync(string transport)
    {
        var spec = new ScenarioSpec
        {
            Transport = transport,
            Publishers = 1,
            Subscribers = 1,
            PayloadBytes = _options.PayloadBytes,
            Duration = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(300)),
            Warmup = Duration.FromTimeSpan(TimeSpan.Zero),
            Name = "soak priming",
        };
        Pace(spec);
        var started = await _control.StartScenarioAsync(new() { Spec = spec }, deadline: Deadline());
        var clock = Stopwatch.StartNew();
        Scenario scenario;
        do
        {
            await Task.Delay(100);
            scenario = await _control.GetScenarioAsync(new() { Id = started.Id }, deadline: Deadline());
        }
        while (scenario.State is not (ScenarioState.Completed or ScenarioState.Stopped or ScenarioState.Failed) && clock.Elapsed < TimeSpan.FromSeconds(60));

        if (scenario.State != ScenarioState.Completed)
        {
            throw new SoakSetupException($"priming {transport} ended {scenario.State}: {scenario.Error}; daemon log: {_logPath}");
        }
    }

    /// <summary>The soak's offered rate and wait strategy, where given, on <paramref name="spec"/> (priming and soaking alike).</summary>
    private void Pace(ScenarioSpec spec)
    {
        if (_options.RatePerPublisher is { } rate)
        {
            spec.RatePerPublisher = rate;
        }

        if (_options.Wait is { } wait)
        {
            spec.WaitStrategy = wait;
        }
    }

    /// <summary>
    /// Samples <paramref name="trackers"/>' scenarios (which run until stopped) while the live heaps are read as their
    /// measured windows begin and a window later, then stops them and waits until they have ended.
    /// </summary>
    private async Task<HeapReadings> SoakAsync(IReadOnlyList<ScenarioTracker> trackers)
    {
        var sampling = SampleUntilFinishedAsync(trackers);
        var clock = Stopwatch.StartNew();
        while (!trackers.All(t => t.Started) && !sampling.IsCompleted && clock.Elapsed < _options.Warmup + TimeSpan.FromMinutes(2))
        {
            await Task.Delay(100);
        }

        if (!sampling.IsCompleted)
        {
            // Every agent of the daemon is one of these scenarios' (the soak starts nothing else beside them).
            var primed = Stopwatch.StartNew();
            var children = DaemonChildren();
            await HeapReadings.PrimeAsync([_daemon.Id, .. children], () => trackers.ToList().ForEach(t => t.HeapReading()));
            Progress($"first live-heap reading (not counted) of {1 + children.Count} processes: {primed.Elapsed.TotalSeconds:0.0} s");
        }

        // A scenario that fails early ends the sampling: its failure is the verdict, the readings then say "not measured".
        while (!trackers.All(t => t.ReadyToRead) && !sampling.IsCompleted)
        {
            if (clock.Elapsed > _options.Warmup + TimeSpan.FromMinutes(2))
            {
                throw new SoakSetupException($"scenarios not measuring {clock.Elapsed.TotalSeconds:0} s after they started; daemon log: {_logPath}");
            }

            await Task.Delay(100);
        }

        var heaps = await HeapReadings.TakeAsync([_daemon.Id, .. trackers.SelectMany(t => t.ReadAgents())], _options.Duration, sampling,
            () => trackers.ToList().ForEach(t => t.HeapReading()), () => trackers.ToList().ForEach(t => t.FirstHeapReadDone()));
        foreach (var tracker in trackers.Where(t => !t.Finished))
        {
            await _control.StopScenarioAsync(new() { Id = tracker.Id }, deadline: Deadline());
        }

        await sampling;
        return heaps;
    }

    private async Task<ScenarioTracker> StartScenarioAsync(string transport, bool crossProcess)
    {
        var spec = new ScenarioSpec
        {
            Transport = transport,
            Publishers = _options.Publishers,
            Subscribers = _options.Subscribers,
            PayloadBytes = _options.PayloadBytes,
            // No duration: it runs until the soak has read the live heaps a window apart, then stops it.
            Warmup = Duration.FromTimeSpan(_options.Warmup),
            Topology = Topology.AllToAll,
            PayloadAccess = PayloadAccess.Full,
            Mode = Mode.Stream,
            Name = "soak",
        };
        Pace(spec);
        var before = MachineSample.Take(_daemon.Id);
        StartScenarioResponse started;
        try
        {
            started = await _control.StartScenarioAsync(new() { Spec = spec }, deadline: Deadline());
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.InvalidArgument && OptionOf(e.Status.Detail) is { } option)
        {
            // The daemon's rule, under the option that set the field it names.
            throw new ArgumentException($"{option}: {e.Status.Detail}", e);
        }

        Progress($"{transport}: scenario {started.Id} started ({_options.Publishers}:{_options.Subscribers} ALL_TO_ALL, {_options.PayloadBytes} B FULL, " +
            $"{started.Scenario.Spec.WaitStrategy}, {_options.Warmup.TotalSeconds:0} s warmup + {_options.Duration.TotalSeconds:0} s)");
        return new ScenarioTracker(started.Scenario, crossProcess, _options.Duration, _options.Warmup, before);
    }

    private static string? OptionOf(string refusal) =>
        refusal.StartsWith("spec.publishers", StringComparison.Ordinal) || refusal.StartsWith("spec.subscribers", StringComparison.Ordinal) ? "--topology"
        : refusal.StartsWith("spec.rate_per_publisher", StringComparison.Ordinal) ? "--rate"
        : refusal.StartsWith("spec.payload_bytes", StringComparison.Ordinal) ? "--payload"
        : refusal.StartsWith("spec.wait_strategy", StringComparison.Ordinal) ? "--wait"
        : null;

    private async Task SampleUntilFinishedAsync(IReadOnlyList<ScenarioTracker> trackers)
    {
        // Beyond the window: two rounds of heap readings (each up to 30 s on a loaded machine), then the stop.
        var deadline = _options.Duration + _options.Warmup + TimeSpan.FromMinutes(3);
        var clock = Stopwatch.StartNew();
        var nextReport = TimeSpan.FromMinutes(1);
        while (trackers.Any(t => !t.Finished))
        {
            if (clock.Elapsed > deadline)
            {
                throw new SoakSetupException($"scenarios still running {deadline.TotalSeconds:0} s after they started; daemon log: {_logPath}");
            }

            await Task.Delay(SampleInterval);
            string metrics = await ScrapeAsync();
            var machine = MachineSample.Take(_daemon.Id);
            foreach (var tracker in trackers.Where(t => !t.Finished))
            {
                tracker.Observe(await _control.GetScenarioAsync(new() { Id = tracker.Id }, deadline: Deadline()), machine, metrics);
            }

            if (clock.Elapsed >= nextReport)
            {
                nextReport += TimeSpan.FromMinutes(1);
                Progress(string.Join("; ", trackers.Select(t => t.Describe())));
            }
        }
    }

    /// <summary>
    /// A finished scenario has released its agents, files and sockets a moment later: wait for that before sampling what
    /// is left. With <paramref name="descriptorsBefore"/>, also until the daemon holds no more descriptors than then (its
    /// side of the agents' connections closes once it reads their end), bounded: a real leak is still there after it.
    /// </summary>
    private async Task SettleAsync(int? descriptorsBefore = null)
    {
        var clock = Stopwatch.StartNew();
        while ((AgentsLeft() > 0 || (descriptorsBefore is { } limit && Probes.OpenDescriptors(_daemon.Id) > limit))
            && clock.Elapsed < TimeSpan.FromSeconds(10))
        {
            await Task.Delay(100);
        }

        await Task.Delay(500);
    }

    private int AgentsLeft() => DaemonChildren().Count;

    private List<int> DaemonChildren() =>
        [.. Directory.EnumerateDirectories("/proc").Select(d => int.TryParse(Path.GetFileName(d), out int pid) ? pid : 0).Where(pid => pid > 0 && ParentOf(pid) == _daemon.Id)];

    private static int ParentOf(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return int.Parse(fields[1], CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return -1;
        }
    }

    private async Task<string> ScrapeAsync()
    {
        try
        {
            return await _http.GetStringAsync(_metricsUrl);
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            Progress($"/metrics scrape failed: {e.Message}");
            return string.Empty;
        }
    }

    private async Task WaitUntilServingAsync()
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            if (_daemon.HasExited)
            {
                throw new SoakSetupException($"the daemon exited with code {_daemon.ExitCode}:\n{Tail()}");
            }

            try
            {
                await _control.ListTransportsAsync(new(), deadline: Deadline());
                return;
            }
            catch (Exception e) when (e is RpcException or HttpRequestException or IOException)
            {
                // A daemon that never serves is a setup failure, said as one (exit code 3), not an unhandled exception.
                if (clock.Elapsed >= TimeSpan.FromSeconds(30))
                {
                    throw new SoakSetupException($"the daemon (pid {_daemon.Id}) did not serve within 30 s ({e.Message}):\n{Tail()}");
                }

                await Task.Delay(200);
            }
        }
    }

    private static DateTime Deadline() => DateTime.UtcNow.AddSeconds(60);

    private string Tail()
    {
        try
        {
            return string.Join('\n', File.ReadLines(_logPath).TakeLast(40));
        }
        catch (IOException)
        {
            return "(no log)";
        }
    }

    private void Progress(string message) =>
        _progress.WriteLine(string.Create(CultureInfo.InvariantCulture, $"[{_clock.Elapsed.TotalSeconds,6:0} s] {message}"));

    internal static string Mib(long bytes) => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1048576.0:0.0} MiB");

    internal static string Rate(double perSecond) => string.Create(CultureInfo.InvariantCulture, $"{perSecond / 1000:0.0} K msg/s");

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        _channel.Dispose();
        _http.Dispose();
        if (!_daemon.HasExited)
        {
            // SIGTERM: the daemon stops its scenarios and removes its files; SIGKILL the whole tree if it does not.
            _ = Kill(_daemon.Id, 15);
            using var grace = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            try
            {
                await _daemon.WaitForExitAsync(grace.Token);
            }
            catch (OperationCanceledException)
            {
                _daemon.Kill(entireProcessTree: true);
                await _daemon.WaitForExitAsync();
            }
        }

        _daemon.Dispose();
        try
        {
            Directory.Delete(_runtimeBase, recursive: true);
        }
        catch (IOException)
        {
            // The log stays for whoever looks.
        }
    }

    [System.Runtime.InteropServices.LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
