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
/// what it receives, reports once a second and once at the end, releases everything of the scenario, and then either
/// serves the next scenario the daemon assigns it (a warm agent) or exits when its stream ends or the daemon is gone.
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
    // The scenario served now (or last): replaced whole by each assignment, read by the reporting thread.
    private ScenarioState? _scenario;

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
                        // Then idle: the daemon may assign another scenario down this stream, or end it.
                        await OnStopAsync(command.Stop.DrainTimeout?.ToTimeSpan() ?? TimeSpan.FromSeconds(10)).ConfigureAwait(false);
                        break;
                }
            }

            if (_scenario is { Stopped: false } unfinished)
            {
                Log($"the daemon ended scenario {unfinished.Identity.ScenarioId} without a stop; exiting");
                return 4;
            }

            return 0;
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
            if (_scenario is { } failed)
            {
                await TryReportAsync(failed, ReportKind.Failed, e.Message).ConfigureAwait(false);
            }

            return 1;
        }
    }

    private async Task OnAssignmentAsync(Assignment assignment)
    {
        Identity identity;
        if (_scenario is null)
        {
            identity = new Identity(_arguments.ScenarioId, _arguments.Index, _arguments.Token, _arguments.TraceParent);
        }
        else if (_scenario.Stopped && assignment.Identity is { } next)
        {
            // A warm agent: the peak memory and the spans are the new scenario's.
            identity = new Identity(next.ScenarioId, next.AgentIndex, next.Token, next.Traceparent);
            ProcessMetrics.ResetPeakResident();
        }
        else
        {
            throw new InvalidOperationException($"an assignment {(assignment.Identity is null ? "without an identity" : "before the stop")} while serving scenario {_scenario.Identity.ScenarioId}");
        }

        var scenario = new ScenarioState(identity);
        Volatile.Write(ref _scenario, scenario);
        _telemetry.BeginScenario(identity.ScenarioId, identity.Index, identity.TraceParent);

        // The daemon resolved the whole set-up; this process maps it and derives nothing of its own.
        _telemetry.BeginPhase("connect");
        var setup = assignment.Setup ?? throw new InvalidOperationException("the assignment carries no subscriber set-up");
        var transport = setup.CreateTransport();
        scenario.TotalPublishers = setup.TotalPublishers;
        if (setup.LockMemory)
        {
            // Before connecting: the transport's buffers and the receivers' stacks are mapped locked from the start.
            // Held until the process exits (the daemon never hands such an agent another scenario).
            _ = MemoryLock.Acquire();
        }

        var host = SubscriberHost.Connect(transport, setup, CancellationToken.None);
        scenario.Host = host;
        host.Start();
        _ = host.Completion.ContinueWith(
            t => TryReportAsync(scenario, ReportKind.Failed, t.Exception!.GetBaseException().Message),
            TaskContinuationOptions.OnlyOnFaulted);
        Log($"subscriber {setup.SubscriberIndex} of scenario {identity.ScenarioId} connected to {setup.Publishers.Count} publisher(s) over {transport.Id}; receiving threads: {setup.ToPlacement()}{(setup.LockMemory ? "; memory locked" : string.Empty)}");
        await ReportAsync(scenario, ReportKind.Ready).ConfigureAwait(false);
    }

    private ScenarioState Serving(string command) =>
        _scenario is { Host: not null, Stopped: false } scenario ? scenario : throw new InvalidOperationException($"{command} before assignment");

    private void OnWarmup()
    {
        var scenario = Serving("warmup");
        _telemetry.BeginPhase("warmup");
        StartProgress(scenario, WarmupProgressInterval);
    }

    /// <summary>
    /// The window has begun (the publishers mark its messages; the receivers need no word of it): CPU and JIT are counted
    /// from here, and progress slows to once a second.
    /// </summary>
    private void OnStart(long measureFromNs)
    {
        var scenario = Serving("start");
        _telemetry.BeginPhase("run");
        // Nothing new here (no log line): code run for the first time now would be compiled inside the window.
        Volatile.Write(ref scenario.MeasureStart, new MeasureStart(ProcessMetrics.Take(), JitActivity.Take()));
        StartProgress(scenario, ProgressInterval);
    }

    private void StartProgress(ScenarioState scenario, TimeSpan interval)
    {
        if (scenario.ProgressTimer is { } timer)
        {
            timer.Period = interval;
            return;
        }

        scenario.ProgressTimer = new PeriodicTimer(interval);
        scenario.Progress = ReportProgressAsync(scenario, scenario.ProgressTimer, scenario.StopProgress.Token);
    }

    private async Task ReportProgressAsync(ScenarioState scenario, PeriodicTimer timer, CancellationToken cancellationToken)
    {
        try
        {
            while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false))
            {
                await ReportAsync(scenario, ReportKind.Progress).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task OnStopAsync(TimeSpan drainTimeout)
    {
        var scenario = Serving("stop");
        var host = scenario.Host!;
        // The window is over (the daemon stops its publishers first): what the drain and the last report compile is not its.
        Volatile.Write(ref scenario.JitAtStop, new StrongBox<JitActivity>(JitActivity.Take()));
        _telemetry.BeginPhase("drain");
        await Task.WhenAny(host.Completion, Task.Delay(drainTimeout)).ConfigureAwait(false);
        if (!host.Completion.IsCompleted)
        {
            Log($"publishers did not end their streams within {drainTimeout.TotalSeconds:0.#} s; what did not arrive counts as lost");
        }

        // Everything of the scenario goes before the final report (threads joined, descriptors closed, mappings
        // unmapped): the daemon reads this process's /proc after it to decide whether it may serve another.
        host.Dispose();
        await scenario.StopProgress.CancelAsync().ConfigureAwait(false);
        if (scenario.Progress is { } progress)
        {
            await progress.ConfigureAwait(false);
        }

        scenario.ProgressTimer?.Dispose();
        scenario.StopProgress.Dispose();

        // The scenario's garbage (its receivers' histograms and buffers) is collected now, between scenarios, not in
        // the next one's window if this agent is handed on; the final report then gives the live heap the daemon checks.
        // Its CPU and wall figures end before this collection.
        scenario.EndSample = ProcessMetrics.Take();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        await ReportAsync(scenario, ReportKind.Final).ConfigureAwait(false);
        scenario.Stopped = true;
    }

    private async Task TryReportAsync(ScenarioState scenario, ReportKind kind, string error)
    {
        try
        {
            await ReportAsync(scenario, kind, error).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException)
        {
            Log($"could not report {kind}: {e.Message}");
        }
    }

    private async Task ReportAsync(ScenarioState scenario, ReportKind kind, string error = "")
    {
        await _reportGate.WaitAsync().ConfigureAwait(false);
        try
        {
            var report = new AgentReport
            {
                ScenarioId = scenario.Identity.ScenarioId,
                AgentIndex = scenario.Identity.Index,
                Token = scenario.Identity.Token,
                Kind = kind,
                Error = error,
            };
            if (scenario.Host is { } host)
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
                report.Counters.NextSequenceByPublisher.AddRange(host.NextSequenceByPublisher(scenario.TotalPublishers));
                var latency = _latencyInterval;
                latency.Reset();
                host.ReadLatencyInterval(latency);
                if (latency.TotalCount > 0)
                {
                    report.LatencyIntervalHdr = ByteString.CopyFrom(_latencyCodec.EncodeUncompressed(latency));
                }
            }

            var now = scenario.EndSample ?? ProcessMetrics.Take();
            var measureStart = Volatile.Read(ref scenario.MeasureStart);
            var start = measureStart?.Process ?? now;
            var jit = measureStart is null ? default : (Volatile.Read(ref scenario.JitAtStop)?.Value ?? JitActivity.Take()).Since(measureStart.Jit);
            report.Process = new ProcessSample
            {
                Pid = Environment.ProcessId,
                CpuSeconds = now.CpuSeconds,
                MeasuredCpuSeconds = now.CpuSeconds - start.CpuSeconds,
                MeasuredWallSeconds = (now.TakenAtNs - start.TakenAtNs) / 1e9,
                PeakRssBytes = ProcessMetrics.PeakResidentBytes(),
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
        _scenario?.Host?.Dispose();
        _channel.Dispose();
        // Last: flushes the spans of the whole run, failures included.
        _telemetry.Dispose();
        return ValueTask.CompletedTask;
    }

    private sealed record MeasureStart(ProcessMetrics.Sample Process, JitActivity Jit);

    /// <summary>Who the agent reports as for one scenario: from its command line first, from the assignment when warm.</summary>
    private sealed record Identity(string ScenarioId, int Index, string Token, string? TraceParent);

    /// <summary>One scenario's state in this process; a warm agent has one after another.</summary>
    private sealed class ScenarioState(Identity identity)
    {
        public Identity Identity { get; } = identity;

        public SubscriberHost? Host { get; set; }

        public int TotalPublishers { get; set; }

        public CancellationTokenSource StopProgress { get; } = new();

        public PeriodicTimer? ProgressTimer { get; set; }

        public Task? Progress { get; set; }

        // Written once by the command thread and read by the reporting one: never seen half-written.
        public MeasureStart? MeasureStart;

        public StrongBox<JitActivity>? JitAtStop;

        /// <summary>CPU and clock when everything of the scenario was released (read by the final report only).</summary>
        public ProcessMetrics.Sample? EndSample { get; set; }

        /// <summary>Its final report is sent: the agent is idle.</summary>
        public bool Stopped { get; set; }
    }
}
