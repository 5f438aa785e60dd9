using System.Diagnostics;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Channels;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Subscribers;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Agents;

/// <summary>
/// One agent process and its conversation with the daemon: the daemon streams commands down the agent's Attach call;
/// the agent reports readiness, progress and its final counters through Report.
/// </summary>
public sealed class AgentSession : SubscriberHandle
{
    private readonly Channel<AgentCommand> _commands = Channel.CreateUnbounded<AgentCommand>();
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _final = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Action<string, bool> _fail;
    private readonly ILogger _logger;
    private readonly byte[] _token;
    private ReceiverCounters _counters;
    private ProcessUsage? _process;
    private ProcessSample? _latestSample;
    private (TimeSpan Jit, long ReportedAtNs)? _jitTime;
    private int _attached;
    private long _lastHeardNs = MonotonicClock.NowNs();

    public AgentSession(string scenarioId, int index, SubscriberSetup setup, Action<string, bool> fail, ILogger logger)
        : base(index)
    {
        ScenarioId = scenarioId;
        Assignment = new Assignment { Setup = setup };
        _fail = fail;
        _logger = logger;
        Token = Convert.ToHexString(RandomNumberGenerator.GetBytes(16));
        _token = Encoding.ASCII.GetBytes(Token);
    }

    public string ScenarioId { get; }

    public Assignment Assignment { get; }

    /// <summary>Per-agent secret handed over in the agent's environment; only our own child can attach as this agent.</summary>
    public string Token { get; }

    public Process? AgentProcess { get; set; }

    public int Pid { get; set; }

    public override int ProcessId => Pid;

    public override string Name => Pid > 0 ? $"agent {Index} (pid {Pid})" : $"agent {Index}";

    public override Task Ready => _ready.Task;

    public bool Finished => _final.Task.IsCompleted;

    public override ReceiverCounters Counters
    {
        get
        {
            lock (_commands)
            {
                return _counters;
            }
        }
    }

    public override ProcessUsage? Process => _process;

    public override ProcessSample? LatestProcessSample => Volatile.Read(ref _latestSample);

    public override long? LastHeardNs => Volatile.Read(ref _lastHeardNs);

    public bool Authenticates(string token) =>
        CryptographicOperations.FixedTimeEquals(Encoding.ASCII.GetBytes(token), _token);

    /// <summary>Serves the agent's Attach stream until the scenario is over for it or the agent goes away.</summary>
    public async Task AttachAsync(Func<AgentCommand, Task> write, CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _attached, 1) == 1)
        {
            throw new InvalidOperationException($"{Name} attached twice.");
        }

        try
        {
            await write(new AgentCommand { Assignment = Assignment }).ConfigureAwait(false);
            await foreach (var command in _commands.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                await write(command).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (!Finished)
        {
            _fail($"{Name} disconnected from the daemon before reporting its result", false);
            throw;
        }
    }

    public void OnReport(AgentReport report)
    {
        Volatile.Write(ref _lastHeardNs, MonotonicClock.NowNs());
        lock (_commands)
        {
            if (report.Counters is { } c)
            {
                _counters = new ReceiverCounters((long)c.Received, (long)c.Lost, (long)c.Corrupted, (long)c.Duplicated,
                    (long)c.MeasuredReceived, (long)c.MeasuredBytes);
                if (report.Kind == ReportKind.Progress)
                {
                    // Rated by when its reports arrive: a daemon tick can fall between two reports or see two at once.
                    ObserveReceived(_counters.Received, MonotonicClock.NowNs());
                }
            }

            if (report.Process is { } p)
            {
                // Never mutated after this: readers on other threads (a /metrics scrape) see a whole sample.
                Volatile.Write(ref _latestSample, p);
                _jitTime = (TimeSpan.FromSeconds(p.JitSeconds), MonotonicClock.NowNs());
                _process = new ProcessUsage(ProcessUsage.AgentRole, Index, p.Pid, p.MeasuredCpuSeconds,
                    p.MeasuredWallSeconds > 0 ? p.MeasuredCpuSeconds / p.MeasuredWallSeconds * 100 : 0, (long)p.PeakRssBytes)
                {
                    Jit = new JitActivity(p.MeasuredJitMethods, TimeSpan.FromSeconds(p.MeasuredJitSeconds)),
                };
            }
        }

        if (!report.LatencyIntervalHdr.IsEmpty)
        {
            try
            {
                RecordLatency(report.LatencyIntervalHdr.Span);
            }
            catch (FormatException e)
            {
                _fail($"{Name} reported a latency histogram that cannot be read: {e.Message}", true);
            }
        }

        switch (report.Kind)
        {
            case ReportKind.Ready:
                _ready.TrySetResult();
                break;
            case ReportKind.Final:
                _final.TrySetResult();
                _commands.Writer.TryComplete();
                break;
            case ReportKind.Failed:
                _fail($"{Name} failed: {report.Error}", true);
                break;
        }
    }

    public void OnExited(int exitCode)
    {
        if (Finished)
        {
            return;
        }

        string how = exitCode > 128 ? $"was killed by signal {exitCode - 128}{SignalName(exitCode - 128)}" : $"exited with code {exitCode}";
        _ready.TrySetException(new ScenarioFailureException($"{Name} {how} before it was ready"));
        // Its connections broke when it died, and that may have been noticed first: this is the cause to report.
        _fail($"{Name} {how} before reporting its result", true);
    }

    public override void StartWarmup()
    {
        // Progress reports (the heartbeat) start now; the time spent connecting before was the start timeout's business.
        Volatile.Write(ref _lastHeardNs, MonotonicClock.NowNs());
        // Publishers start right after this: the rate's first interval runs from here to the first progress report.
        ObserveReceived(Counters.Received, MonotonicClock.NowNs());
        _commands.Writer.TryWrite(new AgentCommand { Warmup = new BeginWarmup() });
    }

    public override void StartMeasurement(long fromNs) =>
        _commands.Writer.TryWrite(new AgentCommand { Start = new StartMeasurement { MeasureFromMonotonicNs = fromNs } });

    public override (TimeSpan Jit, long ReportedAtNs)? JitTime
    {
        get
        {
            lock (_commands)
            {
                return _jitTime;
            }
        }
    }

    public override async Task FinishAsync(TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        _commands.Writer.TryWrite(new AgentCommand
        {
            Stop = new StopRun { DrainTimeout = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(drainTimeout) },
        });
        var reportDeadline = Task.Delay(drainTimeout + TimeSpan.FromSeconds(5), cancellationToken);
        if (await Task.WhenAny(_final.Task, reportDeadline).ConfigureAwait(false) != _final.Task)
        {
            throw new ScenarioFailureException($"{Name} did not report its result within {(drainTimeout + TimeSpan.FromSeconds(5)).TotalSeconds:0} s of the stop");
        }
    }

    public override async ValueTask DisposeAsync()
    {
        _commands.Writer.TryComplete();
        if (AgentProcess is not { } process)
        {
            return;
        }

        try
        {
            using var grace = new CancellationTokenSource(Finished ? TimeSpan.FromSeconds(3) : TimeSpan.FromMilliseconds(200));
            await process.WaitForExitAsync(grace.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            _logger.LogWarning("{Agent} did not exit; killing it", Name);
            try
            {
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            }
            catch (InvalidOperationException)
            {
                // Exited between the check and the kill.
            }
        }
        finally
        {
            process.Dispose();
        }
    }

    private static string SignalName(int signal) => signal switch
    {
        9 => " (SIGKILL)",
        15 => " (SIGTERM)",
        6 => " (SIGABRT)",
        11 => " (SIGSEGV)",
        2 => " (SIGINT)",
        _ => string.Empty,
    };
}
