using System.Runtime.CompilerServices;
using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using Grpc.Net.Client;
using HdrHistogram;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;
using IpcBench.Workload.Placement;

namespace IpcBench.Agent;

/// <summary>
/// One subscriber process. It attaches to its daemon, connects to the publishers it is assigned, verifies and measures
/// what it receives, reports once a second and once at the end, and exits when told to or when the daemon is gone.
/// </summary>
public sealed class AgentProgram : IAsyncDisposable
{
    /// <summary>Missing, unknown or malformed arguments, as the daemon's own usage errors.</summary>
    public const int UsageExitCode = 2;

    private static readonly TimeSpan ProgressInterval = TimeSpan.FromSeconds(1);

    // In the warmup the daemon waits for code generation to settle in every process; it reads ours from these reports.
    private static readonly TimeSpan WarmupProgressInterval = TimeSpan.FromMilliseconds(100);

    private readonly AgentArguments _arguments;
    private readonly GrpcChannel _channel;
    private readonly AgentLink.AgentLinkClient _daemon;
    private readonly SemaphoreSlim _reportGate = new(1, 1);
    private readonly AgentTelemetry _telemetry;
    private readonly CancellationTokenSource _stopProgress = new();
    private SubscriberHost? _host;
    private int _totalPublishers;
    private Task? _progress;
    private PeriodicTimer? _progressTimer;
    // One reference, written once by the command thread and read by the reporting one: never seen half-written.
    private MeasureStart? _measureStart;
    private StrongBox<JitActivity>? _jitAtStop;

    // Reused by every report (reports are serialized by _reportGate): a new histogram would be ~270 KB a second, and
    // the codec keeps the right-sized encoding buffers.
    private readonly LongHistogram _latencyInterval = LatencyHistograms.Create();
    private readonly HistogramCodec _latencyCodec = new();

    private AgentProgram(AgentArguments arguments)
    {
        _arguments = arguments;
        _channel = DaemonChannel.Create(arguments.DaemonAddress);
        _daemon = new AgentLink.AgentLinkClient(_channel);
        _telemetry = AgentTelemetry.Start(arguments);
    }

    public static async Task<int> RunAsync(string[] args)
    {
        NativeHeap.PinMmapThreshold();
        AgentArguments? arguments;
        try
        {
            arguments = AgentArguments.Parse(args, Environment.GetEnvironmentVariable(AgentArguments.TokenVariable));
        }
        catch (ArgumentException e)
        {
            foreach (var line in e.Message.Split(Environment.NewLine))
            {
                Console.Error.WriteLine($"BenchAgent: {line}");
            }

            return UsageExitCode;
        }

        if (arguments is null)
        {
            return 0;
        }

        ParentWatchdog.Start(arguments.DaemonPid, Log);
        await using var agent = new AgentProgram(arguments);
        return await agent.RunAsync().ConfigureAwait(false);
    }

    private static void Log(string message) => Console.Error.WriteLine(message);

    private async Task<int> RunAsync()
    {
        var attach = new AttachRequest
        {
            ScenarioId = _arguments.ScenarioId,
            AgentIndex = _arguments.Index,
            Token = _arguments.Token,
            Pid = Environment.ProcessId,
        };
        try
        {
            using var call = _daemon.Attach(attach);
            await foreach (var command in call.ResponseStream.ReadAllAsync().ConfigureAwait(false))
            {
                switch (command.CommandCase)
                {
                    case AgentCommand.CommandOneofCase.Assignment:
                        await OnAssignmentAsync(command.Assignment).ConfigureAwait(false);
                        break;
                    case AgentCommand.CommandOneofCase.Warmup:
                        OnWarmup();
                        break;
                    case AgentCommand.CommandOneofCase.Start:
                        OnStart(command.Start.MeasureFromMonotonicNs);
                        break;
                    case AgentCommand.CommandOneofCase.Stop:
                        await OnStopAsync(command.Stop.DrainTimeout?.ToTimeSpan() ?? TimeSpan.FromSeconds(10)).ConfigureAwait(false);
                        return 0;
                }
            }

            Log("the daemon ended the scenario without a stop; exiting");
            return 4;
        }
        catch (RpcException e)
        {
            Log($"lost the daemon: {e.StatusCode}: {e.Message}");
            _telemetry.Failed($"lost the daemon: {e.StatusCode}");
            return ParentWatchdog.ExitCode;
        }
        catch (Exception e)
        {
            Log($"failed: {e.Message}");
            _telemetry.Failed(e.Message);
            await TryReportAsync(ReportKind.Failed, e.Message).ConfigureAwait(false);
            return 1;
        }
    }

    private async Task OnAssignmentAsync(Assignment assignment)
    {
        // The daemon resolved the whole set-up; this process maps it and derives nothing of its own.
        _telemetry.BeginPhase("connect");
        var setup = assignment.Setup ?? throw new InvalidOperationException("the assignment carries no subscriber set-up");
        var transport = setup.CreateTransport();
        _totalPublishers = setup.TotalPublishers;
        if (setup.LockMemory)
        {
            // Before connecting: the transport's buffers and the receivers' stacks are mapped locked from the start.
            // Held until the process exits.
            _ = MemoryLock.Acquire();
        }

        _host = SubscriberHost.Connect(transport, setup, CancellationToken.None);
        _host.Start();
        _ = _host.Completion.ContinueWith(
            t => TryReportAsync(ReportKind.Failed, t.Exception!.GetBaseException().Message),
            TaskContinuationOptions.OnlyOnFaulted);
        Log($"subscriber {setup.SubscriberIndex} connected to {setup.Publishers.Count} publisher(s) over {transport.Id}; receiving threads: {setup.ToPlacement()}{(setup.LockMemory ? "; memory locked" : string.Empty)}");
        await ReportAsync(ReportKind.Ready).ConfigureAwait(false);
    }

    private void OnWarmup()
    {
        _ = _host ?? throw new InvalidOperationException("warmup before assignment");
        _telemetry.BeginPhase("warmup");
        StartProgress(WarmupProgressInterval);
    }

    /// <summary>
    /// The window has begun (the publishers mark its messages; the receivers need no word of it): CPU and JIT are counted
    /// from here, and progress slows to once a second.
    /// </summary>
    private void OnStart(long measureFromNs)
    {
        _ = _host ?? throw new InvalidOperationException("start before assignment");
        _telemetry.BeginPhase("run");
        // Nothing new here (no log line): code run for the first time now would be compiled inside the window.
        Volatile.Write(ref _measureStart, new MeasureStart(ProcessMetrics.Take(), JitActivity.Take()));
        StartProgress(ProgressInterval);
    }

    private void StartProgress(TimeSpan interval)
    {
        if (_progressTimer is { } timer)
        {
            timer.Period = interval;
            return;
        }

        _progressTimer = new PeriodicTimer(interval);
        _progress = ReportProgressAsync(_progressTimer, _stopProgress.Token);
    }

    private async Task ReportProgressAsync(PeriodicTimer timer, CancellationToken cancellationToken)
    {
        try
        {
            while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false))
            {
                await ReportAsync(ReportKind.Progress).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task OnStopAsync(TimeSpan drainTimeout)
    {
        var host = _host ?? throw new InvalidOperationException("stop before assignment");
        // The window is over (the daemon stops its publishers first): what the drain and the last report compile is not its.
        Volatile.Write(ref _jitAtStop, new StrongBox<JitActivity>(JitActivity.Take()));
        _telemetry.BeginPhase("drain");
        await Task.WhenAny(host.Completion, Task.Delay(drainTimeout)).ConfigureAwait(false);
        if (!host.Completion.IsCompleted)
        {
            Log($"publishers did not end their streams within {drainTimeout.TotalSeconds:0.#} s; what did not arrive counts as lost");
        }

        host.Stop();
        _stopProgress.Cancel();
        if (_progress is { } progress)
        {
            await progress.ConfigureAwait(false);
        }

        await ReportAsync(ReportKind.Final).ConfigureAwait(false);
    }

    private async Task TryReportAsync(ReportKind kind, string error)
    {
        try
        {
            await ReportAsync(kind, error).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException)
        {
            Log($"could not report {kind}: {e.Message}");
        }
    }

    private async Task ReportAsync(ReportKind kind, string error = "")
    {
        await _reportGate.WaitAsync().ConfigureAwait(false);
        try
        {
            var report = new AgentReport
            {
                ScenarioId = _arguments.ScenarioId,
                AgentIndex = _arguments.Index,
                Token = _arguments.Token,
                Kind = kind,
                Error = error,
            };
            if (_host is { } host)
            {
                var counters = host.Counters;
                report.Counters = new SubscriberCounters
                {
                    Received = (ulong)counters.Received,
                    Lost = (ulong)counters.Lost,
                    Corrupted = (ulong)counters.Corrupted,
                    Duplicated = (ulong)counters.Duplicated,
                    MeasuredReceived = (ulong)counters.MeasuredReceived,
                    MeasuredBytes = (ulong)counters.MeasuredBytes,
                };
                report.Counters.NextSequenceByPublisher.AddRange(host.NextSequenceByPublisher(_totalPublishers));
                var latency = _latencyInterval;
                latency.Reset();
                host.ReadLatencyInterval(latency);
                if (latency.TotalCount > 0)
                {
                    report.LatencyIntervalHdr = ByteString.CopyFrom(_latencyCodec.EncodeUncompressed(latency));
                }
            }

            var now = ProcessMetrics.Take();
            var measureStart = Volatile.Read(ref _measureStart);
            var start = measureStart?.Process ?? now;
            var jit = measureStart is null ? default : (Volatile.Read(ref _jitAtStop)?.Value ?? JitActivity.Take()).Since(measureStart.Jit);
            report.Process = new ProcessSample
            {
                Pid = Environment.ProcessId,
                CpuSeconds = now.CpuSeconds,
                MeasuredCpuSeconds = now.CpuSeconds - start.CpuSeconds,
                MeasuredWallSeconds = (now.TakenAtNs - start.TakenAtNs) / 1e9,
                PeakRssBytes = now.PeakRssBytes,
                RssBytes = ProcessMetrics.ResidentBytes(),
                GcGen0Collections = GC.CollectionCount(0),
                GcGen1Collections = GC.CollectionCount(1),
                GcGen2Collections = GC.CollectionCount(2),
                GcHeapBytes = (ulong)Math.Max(0, GC.GetGCMemoryInfo().HeapSizeBytes),
                GcCommittedBytes = (ulong)Math.Max(0, GcReadings.CommittedBytes()),
                GcLiveBytes = (ulong)Math.Max(0, GcReadings.LiveHeapBytes()),
                GcAllocatedBytes = (ulong)GC.GetTotalAllocatedBytes(precise: false),
                GcPauseSeconds = GC.GetTotalPauseDuration().TotalSeconds,
                MeasuredJitMethods = jit.Methods,
                MeasuredJitSeconds = jit.Time.TotalSeconds,
                JitSeconds = System.Runtime.JitInfo.GetCompilationTime().TotalSeconds,
            };
            await _daemon.ReportAsync(report, deadline: DateTime.UtcNow.AddSeconds(10)).ConfigureAwait(false);
        }
        finally
        {
            _reportGate.Release();
        }
    }

    public ValueTask DisposeAsync()
    {
        _host?.Dispose();
        _channel.Dispose();
        _stopProgress.Dispose();
        _progressTimer?.Dispose();
        // Last: flushes the spans of the whole run, failures included.
        _telemetry.Dispose();
        return ValueTask.CompletedTask;
    }

    private sealed record MeasureStart(ProcessMetrics.Sample Process, JitActivity Jit);
}
