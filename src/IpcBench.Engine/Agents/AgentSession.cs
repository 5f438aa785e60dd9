using System.Diagnostics;
using System.Security.Cryptography;
using System.Text;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Subscribers;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Agents;

/// <summary>
/// One subscriber of one scenario served by an agent process: the daemon sends commands down the agent's Attach stream
/// (its <see cref="AgentConnection"/>, which outlives the session when the agent is kept warm); the agent reports
/// readiness, progress and its final counters through Report, as this session's identity.
/// </summary>
public sealed class AgentSession : SubscriberHandle
{
    private readonly object _gate = new();
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _final = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Action<string, bool> _fail;
    private readonly ILogger _logger;
    private readonly byte[] _token;
    private ReceiverCounters _counters;
    private ProcessUsage? _process;
    private ProcessSample? _latestSample;
    private (TimeSpan Jit, long ReportedAtNs)? _jitTime;
    private long _lastHeardNs = MonotonicClock.NowNs();

    public AgentSession(string scenarioId, int index, SubscriberSetup setup, Action<string, bool> fail, ILogger logger)
        : base(index)
    {
        ScenarioId = scenarioId;
        Setup = setup;
        _fail = fail;
        _logger = logger;
        Token = Convert.ToHexString(RandomNumberGenerator.GetBytes(16));
        _token = Encoding.ASCII.GetBytes(Token);
    }

    public string ScenarioId { get; }

    public SubscriberSetup Setup { get; }

    /// <summary>The agent process serving this session: started for it, or taken warm from the pool.</summary>
    public AgentConnection? Connection { get; set; }

    /// <summary>How many scenarios the agent served before this one (0: started for it).</summary>
    public int ScenariosBefore { get; set; }

    /// <summary>Per-agent secret handed over in the agent's environment; only our own child can attach as this agent.</summary>
    public string Token { get; }

    public int Pid { get; set; }

    public override int ProcessId => Pid;

    public override string Name => Pid > 0 ? $"agent {Index} (pid {Pid})" : $"agent {Index}";

    public override Task Ready => _ready.Task;

    public bool Finished => _final.Task.IsCompleted;

    public override ReceiverCounters Counters
    {
        get
        {
            lock (_gate)
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

    /// <summary>
    /// This session's assignment; for a warm agent (<paramref name="reassigned"/>) with the identity it reports as from
    /// now on, the W3C traceparent of the span assigning it included.
    /// </summary>
    public Assignment AssignmentFor(bool reassigned)
    {
        var assignment = new Assignment { Setup = Setup };
        if (reassigned)
        {
            assignment.Identity = new AgentIdentity
            {
                ScenarioId = ScenarioId,
                AgentIndex = Index,
                Token = Token,
                Traceparent = Activity.Current is { IdFormat: ActivityIdFormat.W3C } assigning ? assigning.Id! : string.Empty,
            };
        }

        return assignment;
    }

    /// <summary>The agent's Attach stream broke.</summary>
    public void OnDisconnected()
    {
        if (!Finished)
        {
            _fail($"{Name} disconnected from the daemon before reporting its result", false);
        }
    }

    public void OnReport(AgentReport report)
    {
        Volatile.Write(ref _lastHeardNs, MonotonicClock.NowNs());
        lock (_gate)
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
                    ScenariosBefore = ScenariosBefore,
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
        Connection?.Send(new AgentCommand { Warmup = new BeginWarmup() });
    }

    public override void StartMeasurement(long fromNs) =>
        Connection?.Send(new AgentCommand { Start = new StartMeasurement { MeasureFromMonotonicNs = fromNs } });

    public override (TimeSpan Jit, long ReportedAtNs)? JitTime
    {
        get
        {
            lock (_gate)
            {
                return _jitTime;
            }
        }
    }

    public override async Task FinishAsync(TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        Connection?.Send(new AgentCommand
        {
            Stop = new StopRun { DrainTimeout = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(drainTimeout) },
        });
        var reportDeadline = Task.Delay(drainTimeout + TimeSpan.FromSeconds(5), cancellationToken);
        if (await Task.WhenAny(_final.Task, reportDeadline).ConfigureAwait(false) != _final.Task)
        {
            throw new ScenarioFailureException($"{Name} did not report its result within {(drainTimeout + TimeSpan.FromSeconds(5)).TotalSeconds:0} s of the stop");
        }
    }

    /// <summary>Ends the agent: a finished one gets a few seconds to exit after its stream closes, any other 200 ms.</summary>
    public override async ValueTask DisposeAsync()
    {
        if (Connection is { } connection && ReferenceEquals(connection.Session, this))
        {
            await connection.StopAsync(Finished ? TimeSpan.FromSeconds(3) : TimeSpan.FromMilliseconds(200),
                message => _logger.LogWarning("{Message}", message)).ConfigureAwait(false);
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
