using System.Diagnostics;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// One scenario from start to result, as a state machine: PENDING, STARTING (set-up by <see cref="ScenarioTopology"/>),
/// WARMING_UP and RUNNING (a one-second tick through <see cref="ScenarioMeter"/>), STOPPING, and COMPLETED, STOPPED or
/// FAILED. It tells the store of every change and answers snapshots and scrapes from other threads. A final state is
/// shown only once the scenario has released its agents, shared memory and sockets: a client that starts the next
/// scenario the moment it reads COMPLETED must find the admission slot free (until then the scenario reads STOPPING).
/// </summary>
public sealed class ScenarioRun
{
    private static readonly TimeSpan Tick = TimeSpan.FromSeconds(1);

    // How often the warmup reads the processes' JIT time (agents report theirs every 100 ms in the warmup).
    private const long CodeSettlePollNs = 50_000_000;

    // How long past the warmup the window waits for every publisher's first message to get through (see MeasureAsync).
    private const long FirstMessageLimitNs = 10_000_000_000;

    private readonly ScenarioServices _services;
    private readonly object _gate = new();
    private readonly TaskCompletionSource _stopRequested = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _abort = new();
    private readonly FailureLog _failures = new();
    private readonly ScenarioTopology _topology;
    private readonly ScenarioMeter _meter;
    private readonly RunSpec _runSpec;
    private ScenarioTrace? _trace;
    private RunState _state = RunState.Pending;
    private string _error = string.Empty;
    private DateTime? _startedAt;
    private DateTime? _endedAt;
    private RunEnvironment? _environment;
    private IntervalSample? _lastInterval;
    private RunStats? _finalStats;
    private (RunState State, string Error)? _outcome;
    private volatile bool _released;
    private ScenarioMetricsSnapshot? _finalMetrics;
    private (string Error, double Noise)? _tooNoisy;

    public ScenarioRun(string id, ResolvedSpec spec, ScenarioServices services)
    {
        Id = id;
        Spec = spec;
        _runSpec = spec.ToRunSpec();
        _services = services;
        CreatedAt = DateTime.UtcNow;
        StartedBy = Activity.Current?.Context;
        _topology = new ScenarioTopology(id, spec, services, _failures, _abort.Token);
        _meter = new ScenarioMeter(spec, _topology, interval => services.Recorder.LatencyInterval(this, interval),
            new SoakSettings(TimeSpan.FromSeconds(services.Options.SoakPointSeconds), TimeSpan.FromMinutes(services.Options.SoakWindowMinutes))
            {
                ResourceWarmup = TimeSpan.FromSeconds(services.Options.SoakResourceWarmupSeconds),
            },
            point => services.Recorder.SoakPoint(this, point));
    }

    /// <summary>The span of the control call that created this scenario, if traced; the scenario's trace links to it.</summary>
    public ActivityContext? StartedBy { get; }

    public string Id { get; }

    /// <summary>The suite running this scenario as one of its cells; empty for a scenario started on its own.</summary>
    public string SuiteId { get; init; } = string.Empty;

    /// <summary>The finished scenario this one resumes; empty otherwise.</summary>
    public string ResumedFrom { get; init; } = string.Empty;

    /// <summary>The agent processes and shared memory admission control counted for this scenario while it runs.</summary>
    public AdmissionControl.Claim Claim { get; init; }

    public ResolvedSpec Spec { get; }

    public DateTime CreatedAt { get; }

    /// <summary>Completes when the scenario reached COMPLETED, STOPPED or FAILED and released everything it held.</summary>
    public Task Completion => _completed.Task;

    /// <summary>
    /// Whether it has released its agents, shared memory and sockets: set before the final state is shown, so admission
    /// control, which counts only scenarios that have not, never refuses a start made on seeing that state.
    /// </summary>
    public bool Released => _released;

    public RunState State
    {
        get
        {
            lock (_gate)
            {
                return _state;
            }
        }
    }

    public bool IsFinished => State.IsFinished();

    /// <summary>
    /// The noise it measured when it FAILED for exceeding max_noise_percent (and for nothing else); null otherwise. A
    /// suite retries a cell on this alone.
    /// </summary>
    public double? ExceededNoisePercent
    {
        get
        {
            lock (_gate)
            {
                return _state == RunState.Failed && _tooNoisy is { } noisy && noisy.Error == _error ? noisy.Noise : null;
            }
        }
    }

    private ILogger Logger => _services.Logger;

    public void RequestStop() => _stopRequested.TrySetResult();

    public async Task RunAsync()
    {
        using var scope = Logger.BeginScope(new Dictionary<string, object> { ["ScenarioId"] = Id });
        using var trace = _trace = new ScenarioTrace(Id, Spec, StartedBy);
        bool stoppedByUser = false;
        try
        {
            Logger.LogInformation("Scenario {ScenarioId} starting: {Transport} {Publishers}:{Subscribers} {PayloadBytes} B {Topology} {Access} {Mode} {Wait}",
                Id, Spec.Transport.Id, Spec.Publishers, Spec.Subscribers, Spec.PayloadBytes, Spec.Topology, Spec.PayloadAccess, Spec.Mode, Spec.WaitMode);
            SetState(RunState.Starting);
            trace.BeginPhase("start");
            var environment = await EnvironmentProbe.ReadAsync(Spec).ConfigureAwait(false);
            lock (_gate)
            {
                _environment = environment;
            }

            Remember(environment.CoreToCoreRoundTripNs);

            trace.BeginPhase("agents up");
            if (await _topology.SetUpAsync(_stopRequested.Task).ConfigureAwait(false))
            {
                stoppedByUser = await MeasureAsync().ConfigureAwait(false);
                await TearDownMeasurementAsync().ConfigureAwait(false);
                await ProbeAgainAsync().ConfigureAwait(false);
                ThrowIfTooNoisy();
            }
            else
            {
                // Stopped while starting: nothing was measured, and nothing failed either.
                stoppedByUser = true;
            }

            Finish(stoppedByUser ? RunState.Stopped : RunState.Completed, string.Empty);
        }
        catch (Exception e)
        {
            string error = await _failures.ChooseAsync(e).ConfigureAwait(false);
            Logger.LogError("Scenario {ScenarioId} failed: {Error}", Id, error);
            _abort.Cancel();
            await OffThePool.RunAsync(() => _topology.StopPublishers(join: false)).ConfigureAwait(false);
            Finish(RunState.Failed, error);
        }
        finally
        {
            _abort.Cancel();
            await _topology.ReleaseAsync().ConfigureAwait(false);
            _released = true;
            Publish(_outcome ?? (RunState.Failed, "the scenario ended without an outcome"));
            Logger.LogInformation("Scenario {ScenarioId} ended {State}", Id, State);
            lock (_gate)
            {
                trace.End(_state, _error, _finalStats);
            }

            _completed.TrySetResult();
        }
    }

    /// <summary>Runs publishers until the duration is over (false) or a stop was requested (true).</summary>
    private async Task<bool> MeasureAsync()
    {
        long startedNs = MonotonicClock.NowNs();
        long warmupEndNs = startedNs + Spec.Warmup.Ticks * 100;
        long settleTimeoutNs = _services.Options.CodeSettleTimeoutSeconds * 1_000_000_000L;
        var settling = new CodeSettling();
        _meter.Start(startedNs);
        lock (_gate)
        {
            _startedAt = DateTime.UtcNow;
        }

        _topology.CreatePublishers(_meter.Window);
        _ = _topology.WatchHeartbeatsAsync();
        SetState(RunState.WarmingUp);
        _trace?.BeginPhase("warmup");
        _topology.StartPublishers();

        long tickNs = Tick.Ticks * 100;
        long nextTickNs = startedNs + tickNs;
        long? endNs = null;
        while (true)
        {
            long now = MonotonicClock.NowNs();
            long wakeNs = Math.Min(nextTickNs, endNs ?? long.MaxValue);
            if (!_meter.Measuring)
            {
                // Until the window begins: at the warmup's end, then (settling, first messages) every poll.
                wakeNs = Math.Min(wakeNs, settleTimeoutNs == 0 && now < warmupEndNs ? warmupEndNs : now + CodeSettlePollNs);
            }

            var first = await Task.WhenAny(Task.Delay(TimeSpan.FromTicks(Math.Max(0, wakeNs - now) / 100)), _stopRequested.Task, _failures.First).ConfigureAwait(false);
            if (first == _failures.First)
            {
                throw new ScenarioFailureException(_failures.First.Result);
            }

            now = MonotonicClock.NowNs();
            bool began = false;
            if (!_meter.Measuring)
            {
                // The window opens after the warmup's time, once code generation settled (or its limit passed) and
                // every publisher has a message through: a round trip's first echo can take longer than a short
                // warmup on a loaded machine (connection set-up, cold code), and a window that opened before it
                // measured that one cold message or, in 300 ms, nothing at all.
                bool? settled = settleTimeoutNs == 0 ? null : _topology.CodeSettled(settling, now);
                bool settledOrGaveUp = settled is null or true || now >= warmupEndNs + settleTimeoutNs;
                bool throughOrGaveUp = _topology.FirstMessagesThrough() || now >= warmupEndNs + FirstMessageLimitNs;
                if (now >= warmupEndNs && settledOrGaveUp && throughOrGaveUp)
                {
                    _meter.BeginMeasuring(now, settled);
                    endNs = Spec.Duration is { } duration ? now + duration.Ticks * 100 : null;
                    began = true;
                    SetState(RunState.Running);
                    _trace?.BeginPhase("run");
                }
            }

            bool stop = first == _stopRequested.Task;
            bool ended = endNs is { } stopAt && now >= stopAt;
            if (now >= nextTickNs || began || stop || ended)
            {
                nextTickNs = now + tickNs;
                var interval = _meter.Tick(now);
                lock (_gate)
                {
                    _lastInterval = interval;
                }

                // The series the database keeps: one point per tick, queued (never awaited) on this tick thread.
                _services.Recorder.Interval(this, interval);
            }

            if (stop)
            {
                return true;
            }

            if (ended)
            {
                return false;
            }
        }
    }

    private async Task TearDownMeasurementAsync()
    {
        SetState(RunState.Stopping);
        _trace?.BeginPhase("stop");
        _meter.End();
        await OffThePool.RunAsync(() => _topology.StopPublishers(join: true)).ConfigureAwait(false);
        _failures.ThrowIfFailed();
        await _topology.FinishSubscribersAsync().ConfigureAwait(false);
        _meter.AddTail();
    }

    /// <summary>The core-to-core probe again, the publishers stopped: whether the host moved the vCPUs during the run.</summary>
    private async Task ProbeAgainAsync()
    {
        long? after = await EnvironmentProbe.ProbeAgainAsync(Spec).ConfigureAwait(false);
        Remember(after);
        lock (_gate)
        {
            var classes = _environment is { } environment ? _services.Probes.Classes(MachineIdentity.Of(environment)) : PlacementClasses.NotLearned;
            _environment = _environment is { } before ? before with { CoreToCoreAfterNs = after, PlacementClasses = classes.Describe() } : null;
            _meter.Probes = (_environment?.CoreToCoreRoundTripNs, after, classes);
        }
    }

    /// <summary>
    /// Adds a probe to the machine's history: only a probe of a pinned pair (a probe whose threads could not be pinned
    /// measured wherever the scheduler put them, not a placement).
    /// </summary>
    private void Remember(long? probeNs)
    {
        if (probeNs is > 0 and var ns && _environment is { } environment && environment.CoreToCoreCores.Contains("<->", StringComparison.Ordinal)
            && !environment.CoreToCoreCores.Contains(' ', StringComparison.Ordinal))
        {
            _services.Probes.Add(MachineIdentity.Of(environment), environment.CoreToCoreCores, ns, Id);
        }
    }

    /// <summary>max_noise_percent: a result measured on a machine busier than the spec allows is FAILED, its figures kept.</summary>
    private void ThrowIfTooNoisy()
    {
        if (Spec.Placement.MaxNoisePercent is { } allowed && _meter.NoisePercent is { } measured && measured > allowed)
        {
            var error = string.Create(System.Globalization.CultureInfo.InvariantCulture,
                $"max_noise_percent: other processes used {measured:0.###}% of the machine's CPU during the measured window, above the allowed {allowed:0.###}%");
            lock (_gate)
            {
                _tooNoisy = (error, measured);
            }

            throw new ScenarioFailureException(error);
        }
    }

    private void SetState(RunState state)
    {
        lock (_gate)
        {
            _state = state;
        }

        _trace?.StateChanged(state);
        Logger.LogInformation("Scenario {ScenarioId} is {State}", Id, state);
        _services.Recorder.Changed(this);
    }

    /// <summary>
    /// The outcome, with the result as it stands (whatever was measured before a failure, too): the result is final from
    /// here, the state reads STOPPING until <see cref="Publish"/> once everything is released.
    /// </summary>
    private void Finish(RunState state, string error)
    {
        var stats = _meter.BuildStats();
        bool wasStopping;
        lock (_gate)
        {
            _finalStats = stats;
            _outcome = (state, error);
            _endedAt = DateTime.UtcNow;
            wasStopping = _state == RunState.Stopping;
        }

        if (!wasStopping)
        {
            SetState(RunState.Stopping);
        }
        else
        {
            _services.Recorder.Changed(this);
        }
    }

    /// <summary>The final state, after the release: what clients, suites and admission control act on.</summary>
    private void Publish((RunState State, string Error) outcome)
    {
        lock (_gate)
        {
            _state = outcome.State;
            _error = outcome.Error;
        }

        _trace?.StateChanged(outcome.State);
        _services.Recorder.Changed(this);
    }

    /// <summary>
    /// The counters and latency histogram /metrics exports, read as they are (a few volatile reads and one pass over the
    /// histogram); final, and cached, once the scenario has completed.
    /// </summary>
    public ScenarioMetricsSnapshot ReadMetrics()
    {
        if (Volatile.Read(ref _finalMetrics) is { } final)
        {
            return final;
        }

        bool completed = _completed.Task.IsCompleted;
        RunState state;
        DateTime? startedAt;
        DateTime? endedAt;
        lock (_gate)
        {
            state = _state;
            startedAt = _startedAt;
            endedAt = _endedAt;
        }

        var publishers = _topology.PublisherCounters();
        var latency = _meter.LatencyBuckets();
        SubscriberMetrics[] subscribers = state is RunState.Pending or RunState.Starting
            ? []
            : [.. _topology.Subscribers.Select(s => new SubscriberMetrics(s.Index, s.Counters, s.LatestProcessSample))];
        var metrics = new ScenarioMetricsSnapshot(
            Id, Spec, state, CreatedAt, startedAt, endedAt, _meter.MeasuredSeconds,
            subscribers.Sum(s => s.Counters.MeasuredReceived), subscribers.Sum(s => s.Counters.MeasuredBytes),
            publishers, subscribers, latency)
        {
            NoiseRatio = _meter.NoisePercent / 100,
            SenderLag = _meter.SenderLagBuckets(),
            Soak = completed ? Volatile.Read(ref _finalStats)?.Soak : _meter.Soak(),
        };
        if (completed)
        {
            Volatile.Write(ref _finalMetrics, metrics);
        }

        return metrics;
    }

    /// <summary>The scenario as the control plane and the store show it, as of now.</summary>
    public ScenarioSnapshot Snapshot()
    {
        lock (_gate)
        {
            var stats = _finalStats ?? (_state is RunState.Pending or RunState.Starting ? null : _meter.BuildStats());
            return new ScenarioSnapshot(
                Id, _runSpec, _state, _error, CreatedAt, _startedAt, _endedAt, stats, _environment, _lastInterval,
                _services.Recorder.ErrorFor(Id) ?? string.Empty) { SuiteId = SuiteId, ResumedFrom = ResumedFrom };
        }
    }
}
