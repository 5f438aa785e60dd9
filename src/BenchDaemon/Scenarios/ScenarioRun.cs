using System.Diagnostics;
using Google.Protobuf.WellKnownTypes;
using HdrHistogram;
using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Subscribers;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// One scenario from start to result: publishers on threads of the daemon, subscribers in agent processes (or in the
/// daemon for in-process transports), a one-second tick that keeps a live snapshot, and a final result.
/// </summary>
public sealed class ScenarioRun
{
    private static readonly TimeSpan Tick = TimeSpan.FromSeconds(1);

    private readonly DaemonOptions _options;
    private readonly RuntimeDirectory _runtime;
    private readonly AgentLauncher _launcher;
    private readonly AgentDirectory _agents;
    private readonly ILogger _logger;
    private readonly IScenarioRecorder _recorder;
    private readonly object _gate = new();
    private readonly TaskCompletionSource _stopRequested = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<string> _failed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _completed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _abort = new();
    private readonly List<(int Priority, string Message)> _failures = [];
    private readonly List<IPublisherEndpoint> _endpoints = [];
    private readonly List<PublisherWorker> _publishers = [];
    private readonly List<IntervalHistogramReader> _roundTripReaders = [];
    private readonly List<Thread> _publisherThreads = [];
    private readonly List<SubscriberHandle> _subscribers = [];
    private readonly MeasurementWindow _window = new();
    private readonly LongHistogram _totalLatency = LatencyHistograms.Create();
    private readonly LongHistogram _latencyInterval = LatencyHistograms.Create();
    private readonly HistogramCodec _latencyCodec = new();
    private int _latencyIntervalIndex;
    private long _latencyIntervalStartMs;
    private ScenarioState _state = ScenarioState.Pending;
    private string _error = string.Empty;
    private Timestamp? _startedAt;
    private Timestamp? _endedAt;
    private EnvironmentInfo? _environment;
    private IntervalStats? _lastInterval;
    private ScenarioStats? _finalStats;
    private long _measureFromNs;
    private long _measureToNs;
    private ProcessMetrics.Sample? _daemonAtStart;
    private ProcessMetrics.Sample? _daemonAtEnd;
    private long _startedNs;
    private ProcessMetrics.Sample _tickDaemon;
    private double _tickAgentsCpuSeconds;
    private int _endpointsDisposed;
    private ScenarioMetricsSnapshot? _finalMetrics;
    private Activity? _activity;
    private Activity? _phase;

    public ScenarioRun(string id, ResolvedSpec spec, DaemonOptions options, RuntimeDirectory runtime, AgentLauncher launcher, AgentDirectory agents,
        IScenarioRecorder recorder, ILogger logger)
    {
        _recorder = recorder;
        Id = id;
        Spec = spec;
        _options = options;
        _runtime = runtime;
        _launcher = launcher;
        _agents = agents;
        _logger = logger;
        CreatedAt = Timestamp.FromDateTime(DateTime.UtcNow);
        StartedBy = Activity.Current?.Context;
    }

    /// <summary>The span of the control call that created this scenario, if traced; the scenario's trace links to it.</summary>
    public ActivityContext? StartedBy { get; }

    public string Id { get; }

    /// <summary>The agent processes and shared memory admission control counted for this scenario while it runs.</summary>
    public AdmissionControl.Claim Claim { get; init; }

    public ResolvedSpec Spec { get; }

    public Timestamp CreatedAt { get; }

    /// <summary>Completes when the scenario reached COMPLETED, STOPPED or FAILED and released everything it held.</summary>
    public Task Completion => _completed.Task;

    public ScenarioState State
    {
        get
        {
            lock (_gate)
            {
                return _state;
            }
        }
    }

    public bool IsFinished => State is ScenarioState.Completed or ScenarioState.Stopped or ScenarioState.Failed;

    public void RequestStop() => _stopRequested.TrySetResult();

    public async Task RunAsync()
    {
        using var scope = _logger.BeginScope(new Dictionary<string, object> { ["ScenarioId"] = Id });
        using var activity = _activity = StartScenarioActivity();
        bool stoppedByUser = false;
        try
        {
            _logger.LogInformation("Scenario {ScenarioId} starting: {Transport} {Publishers}:{Subscribers} {PayloadBytes} B {Topology} {Access} {Mode} {Wait}",
                Id, Spec.Transport.Id, Spec.Publishers, Spec.Subscribers, Spec.PayloadBytes, Spec.Topology, Spec.PayloadAccess, Spec.Mode, Spec.WaitMode);
            SetState(ScenarioState.Starting);
            BeginPhase("start");
            _environment = await Task.Run(ProbeEnvironment).ConfigureAwait(false);
            BeginPhase("agents up");
            if (await SetUpAsync().ConfigureAwait(false))
            {
                stoppedByUser = await MeasureAsync().ConfigureAwait(false);
                await TearDownMeasurementAsync().ConfigureAwait(false);
            }
            else
            {
                // Stopped while starting: nothing was measured, and nothing failed either.
                stoppedByUser = true;
            }

            lock (_gate)
            {
                _finalStats = BuildStats();
            }

            Finish(stoppedByUser ? ScenarioState.Stopped : ScenarioState.Completed, string.Empty);
        }
        catch (Exception e)
        {
            string error = await ChooseFailureAsync(e).ConfigureAwait(false);
            _logger.LogError("Scenario {ScenarioId} failed: {Error}", Id, error);
            _abort.Cancel();
            StopPublishers(join: false);
            lock (_gate)
            {
                _finalStats = BuildStats();
            }

            Finish(ScenarioState.Failed, error);
        }
        finally
        {
            await ReleaseAsync().ConfigureAwait(false);
            _logger.LogInformation("Scenario {ScenarioId} ended {State}", Id, State);
            EndScenarioActivity();
            _completed.TrySetResult();
        }
    }

    /// <summary>
    /// The scenario's own trace (a root span, linked to the control call that started it, which ends long before), with
    /// a child span per phase: start, agents up, warmup, run, stop. Null, and free, when nobody listens.
    /// </summary>
    private Activity? StartScenarioActivity()
    {
        // RunAsync runs without the StartScenario call's execution context (ScenarioManager), so this is a root span.
        var activity = Telemetry.Source.StartActivity(
            ActivityKind.Internal,
            links: StartedBy is { } caller ? [new ActivityLink(caller)] : null,
            name: "scenario");
        activity?.SetTag("ipcbench.scenario.id", Id)
            .SetTag("ipcbench.transport", Spec.Transport.Id)
            .SetTag("ipcbench.publishers", Spec.Publishers)
            .SetTag("ipcbench.subscribers", Spec.Subscribers)
            .SetTag("ipcbench.payload_bytes", Spec.PayloadBytes);
        return activity;
    }

    private void BeginPhase(string name)
    {
        _phase?.Dispose();
        _phase = _activity is { } parent ? Telemetry.Source.StartActivity(name, ActivityKind.Internal, parent.Context) : null;
    }

    private void EndScenarioActivity()
    {
        _phase?.Dispose();
        _phase = null;
        if (_activity is not { } activity)
        {
            return;
        }

        lock (_gate)
        {
            activity.SetTag("ipcbench.scenario.state", _state.ToString());
            if (_finalStats is { } stats)
            {
                activity.SetTag("ipcbench.messages_sent", (long)stats.MessagesSent)
                    .SetTag("ipcbench.messages_received", (long)stats.MessagesReceived)
                    .SetTag("ipcbench.messages_lost", (long)stats.MessagesLost)
                    .SetTag("ipcbench.messages_per_second", stats.MessagesPerSecond);
            }

            if (_state == ScenarioState.Failed)
            {
                activity.SetStatus(ActivityStatusCode.Error, _error);
            }
        }
    }

    private EnvironmentInfo ProbeEnvironment()
    {
        var machine = MachineInfo.Read();
        var probe = CoreToCoreProbe.Measure(TimeSpan.FromMilliseconds(30));
        var info = new EnvironmentInfo
        {
            LogicalCores = machine.LogicalCores,
            CpuModel = machine.CpuModel,
            Kernel = machine.Kernel,
            DotnetVersion = machine.DotnetVersion,
            Os = machine.OperatingSystem,
            Hostname = machine.Hostname,
        };
        if (probe is not null)
        {
            // Nanosecond precision: TimeSpan's 100 ns ticks would hide the ~50 ns vs ~450 ns difference this probe exists for.
            info.CoreToCoreRoundTrip = StatsFormatting.Nanoseconds((long)Math.Round(probe.MedianRoundTripNs));
            info.CoreToCoreCores = probe.Cores;
        }

        return info;
    }

    /// <summary>Creates publishers and subscribers and waits until all are ready; false when a stop came first.</summary>
    private async Task<bool> SetUpAsync()
    {
        var transport = Spec.Transport;
        for (int p = 0; p < Spec.Publishers; p++)
        {
            _endpoints.Add(transport.CreatePublisher(Spec.PublisherOptions(_runtime.TransportEnvironment, Id, p)));
        }

        var startTimeout = TimeSpan.FromSeconds(_options.AgentStartTimeoutSeconds);
        var accepting = _endpoints
            .Select(e => Task.Factory.StartNew(
                () => e.WaitForSubscribers(Spec.SubscribersPerPublisher, startTimeout, _abort.Token),
                _abort.Token, TaskCreationOptions.LongRunning, TaskScheduler.Default))
            .ToList();

        for (int s = 0; s < Spec.Subscribers; s++)
        {
            var addresses = Spec.PublishersOf(s).Select(p => new PublisherAddress(p, _endpoints[p].Address)).ToList();
            if (transport.Capabilities.CrossProcess)
            {
                var assignment = new Assignment { Spec = Spec.ToProto(), SubscriberIndex = s };
                assignment.Publishers.AddRange(addresses.Select(a => new PublisherEndpoint { PublisherIndex = a.PublisherIndex, Address = a.Address }));
                var session = new AgentSession(Id, s, assignment, (message, isCause) => Fail(isCause ? 3 : 2, message), _logger);
                _subscribers.Add(session);
                _agents.Add(session);
                _launcher.Launch(session);
            }
            else
            {
                var options = new SubscriberOptions(_runtime.TransportEnvironment, Id, s, addresses, Spec.Publishers, Spec.Subscribers,
                    Spec.MaxMessageBytes, Spec.WaitMode, Spec.RoundTrip);
                var host = SubscriberHost.Connect(transport, options, new SubscriberPlan(Spec.PayloadBytes, Spec.FullPayload, Spec.RoundTrip, Spec.Publishers), _abort.Token);
                _subscribers.Add(new LocalSubscriber(s, host));
            }
        }

        var allReady = Task.WhenAll(accepting.Concat(_subscribers.Select(s => s.Ready)));
        var timeout = Task.Delay(startTimeout + TimeSpan.FromSeconds(1));
        var first = await Task.WhenAny(allReady, timeout, _failed.Task, _stopRequested.Task).ConfigureAwait(false);
        if (first == timeout)
        {
            var notReady = _subscribers.Where(s => !s.Ready.IsCompletedSuccessfully).Select(s => s.Name).ToList();
            throw new ScenarioFailureException(notReady.Count > 0
                ? $"{string.Join(", ", notReady)} did not become ready within {startTimeout.TotalSeconds:0} s"
                : $"publishers of transport '{Spec.Transport.Id}' did not see all subscribers connect within {startTimeout.TotalSeconds:0} s");
        }

        if (first == _failed.Task)
        {
            throw new ScenarioFailureException(_failed.Task.Result);
        }

        if (first == _stopRequested.Task)
        {
            return false;
        }

        await allReady.ConfigureAwait(false);
        foreach (var subscriber in _subscribers.OfType<LocalSubscriber>())
        {
            subscriber.Host.Start();
        }

        return true;
    }

    /// <summary>Runs publishers until the duration is over (false) or a stop was requested (true).</summary>
    private async Task<bool> MeasureAsync()
    {
        long nowNs = MonotonicClock.NowNs();
        long warmupNs = Spec.Warmup.Ticks * 100;
        _startedNs = nowNs;
        _tickDaemon = ProcessMetrics.Take();
        _tickAgentsCpuSeconds = AgentsCpuSeconds();
        _measureFromNs = nowNs + warmupNs;
        _window.Start(_measureFromNs);
        foreach (var subscriber in _subscribers)
        {
            subscriber.StartMeasurement(_measureFromNs);
        }

        lock (_gate)
        {
            _startedAt = Timestamp.FromDateTime(DateTime.UtcNow);
        }

        _latencyIntervalStartMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

        if (warmupNs == 0)
        {
            _daemonAtStart = ProcessMetrics.Take();
        }

        lock (_gate)
        {
            // Under the gate: snapshots and scrapes read the publishers from other threads.
            for (int p = 0; p < Spec.Publishers; p++)
            {
                var worker = new PublisherWorker(_endpoints[p], new PublisherPlan(p, Spec.PayloadBytes, Spec.FullPayload, Spec.RatePerPublisher,
                    Spec.RoundTrip, Spec.SubscribersPerPublisher, Spec.WaitMode), _window);
                _publishers.Add(worker);
                _roundTripReaders.Add(new IntervalHistogramReader(worker.RoundTripLatency));
                var thread = new Thread(() => RunPublisher(worker)) { IsBackground = true, Name = $"pub{p}" };
                _publisherThreads.Add(thread);
            }
        }

        _ = WatchHeartbeatsAsync();
        SetState(warmupNs > 0 ? ScenarioState.WarmingUp : ScenarioState.Running);
        BeginPhase(warmupNs > 0 ? "warmup" : "run");

        _publisherThreads.ForEach(t => t.Start());

        long? endNs = Spec.Duration is { } duration ? _measureFromNs + duration.Ticks * 100 : null;
        while (true)
        {
            long now = MonotonicClock.NowNs();
            long untilEnd = endNs is { } end ? end - now : long.MaxValue;
            long untilMeasure = _daemonAtStart is null ? _measureFromNs - now : long.MaxValue;
            long waitNs = Math.Max(0, Math.Min(Math.Min(untilEnd, untilMeasure), Tick.Ticks * 100));
            var first = await Task.WhenAny(Task.Delay(TimeSpan.FromTicks(waitNs / 100)), _stopRequested.Task, _failed.Task).ConfigureAwait(false);
            if (first == _failed.Task)
            {
                throw new ScenarioFailureException(_failed.Task.Result);
            }

            now = MonotonicClock.NowNs();
            if (_daemonAtStart is null && now >= _measureFromNs)
            {
                _daemonAtStart = ProcessMetrics.Take();
                SetState(ScenarioState.Running);
                BeginPhase("run");
            }

            UpdateInterval(now);
            if (first == _stopRequested.Task)
            {
                return true;
            }

            if (endNs is { } stopAt && now >= stopAt)
            {
                return false;
            }
        }
    }

    /// <summary>
    /// Fails the scenario when an agent stops reporting: a stopped (SIGSTOP) or hung process keeps its sockets open, so
    /// nothing else notices, and its publishers would wait for it forever.
    /// </summary>
    private async Task WatchHeartbeatsAsync()
    {
        long timeoutNs = _options.HeartbeatTimeoutSeconds * 1_000_000_000L;
        var period = TimeSpan.FromMilliseconds(Math.Min(1000, _options.HeartbeatTimeoutSeconds * 250));
        try
        {
            while (!_completed.Task.IsCompleted)
            {
                await Task.Delay(period, _abort.Token).ConfigureAwait(false);
                long now = MonotonicClock.NowNs();
                foreach (var subscriber in _subscribers)
                {
                    if (subscriber.LastHeardNs is { } heard && now - heard > timeoutNs)
                    {
                        Fail(3, string.Create(System.Globalization.CultureInfo.InvariantCulture,
                            $"{subscriber.Name} sent no report for {(now - heard) / 1e9:0.0} s (it reports once a second; IpcBench:HeartbeatTimeoutSeconds is {_options.HeartbeatTimeoutSeconds}): it is hung or stopped, e.g. by SIGSTOP"));
                        return;
                    }
                }
            }
        }
        catch (OperationCanceledException)
        {
            // The scenario is over.
        }
    }

    private void RunPublisher(PublisherWorker worker)
    {
        try
        {
            worker.Run(_abort.Token);
        }
        catch (Exception e)
        {
            Fail(1, $"publisher {worker.Plan.PublisherIndex} on '{Spec.Transport.Id}' failed: {e.Message}");
        }
    }

    private async Task TearDownMeasurementAsync()
    {
        SetState(ScenarioState.Stopping);
        BeginPhase("stop");
        _measureToNs = MonotonicClock.NowNs();
        _daemonAtEnd = ProcessMetrics.Take();
        StopPublishers(join: true);
        if (_failed.Task.IsCompleted)
        {
            throw new ScenarioFailureException(_failed.Task.Result);
        }

        var drain = TimeSpan.FromSeconds(_options.DrainTimeoutSeconds);
        var finishing = Task.WhenAll(_subscribers.Select(s => s.FinishAsync(drain, _abort.Token)));
        if (await Task.WhenAny(finishing, _failed.Task).ConfigureAwait(false) == _failed.Task)
        {
            throw new ScenarioFailureException(_failed.Task.Result);
        }

        await finishing.ConfigureAwait(false);
        var tail = TakeLatencyInterval();
        lock (_gate)
        {
            // The subscribers' last reports: into the totals, not into a misleading sub-second series point.
            _totalLatency.Add(tail);
        }

        if (tail.TotalCount > 0)
        {
            // The .hlog keeps it as the short interval it is: the log holds every value the result counts.
            RecordLatencyInterval(tail);
        }
    }

    private void StopPublishers(bool join)
    {
        _publishers.ForEach(p => p.RequestStop());
        if (!join)
        {
            // Blocked sends only return once their links close.
            DisposeEndpoints();
            return;
        }

        foreach (var thread in _publisherThreads)
        {
            if (!thread.Join(TimeSpan.FromSeconds(_options.DrainTimeoutSeconds)))
            {
                throw new ScenarioFailureException($"publisher thread {thread.Name} did not stop within {_options.DrainTimeoutSeconds} s: a subscriber stopped reading");
            }
        }
    }

    /// <summary>
    /// Records a failure; the highest <paramref name="priority"/> is what users read: 3 a cause (an agent died, failed or
    /// stopped reporting), 2 a symptom of an agent (its connection broke), 1 a publisher or the engine, 0 the unexpected.
    /// </summary>
    private void Fail(int priority, string message)
    {
        lock (_failures)
        {
            _failures.Add((priority, message));
        }

        _failed.TrySetResult(message);
    }

    /// <summary>
    /// A dead agent also breaks its publishers' links; the agent's death is the cause users need to read, so wait a
    /// moment for it before choosing which failure to report.
    /// </summary>
    private async Task<string> ChooseFailureAsync(Exception exception)
    {
        Fail(exception is ScenarioFailureException ? 1 : 0, exception is ScenarioFailureException
            ? exception.Message
            : $"{exception.GetType().Name}: {exception.Message}");
        await Task.Delay(300).ConfigureAwait(false);
        lock (_failures)
        {
            // The earliest among the most telling failures.
            return _failures.OrderByDescending(f => f.Priority).First().Message;
        }
    }

    private void DisposeEndpoints()
    {
        if (Interlocked.Exchange(ref _endpointsDisposed, 1) == 1)
        {
            return;
        }

        foreach (var endpoint in _endpoints)
        {
            try
            {
                endpoint.Dispose();
            }
            catch (Exception e)
            {
                _logger.LogWarning(e, "Disposing a publisher endpoint failed");
            }
        }
    }

    private async Task ReleaseAsync()
    {
        _abort.Cancel();
        DisposeEndpoints();

        await Task.WhenAll(_subscribers.Select(async s =>
        {
            await s.DisposeAsync().ConfigureAwait(false);
            if (s is AgentSession session)
            {
                _agents.Remove(session);
            }
        })).ConfigureAwait(false);

        foreach (var thread in _publisherThreads)
        {
            thread.Join(TimeSpan.FromSeconds(2));
        }

        // Per-scenario housekeeping, e.g. the iceoryx2 ports and shared memory of an agent that died during this scenario.
        try
        {
            Spec.Transport.RemoveStaleResources(_runtime.TransportEnvironment);
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "Removing stale resources of {Transport} failed", Spec.Transport.Id);
        }
    }

    private void SetState(ScenarioState state)
    {
        lock (_gate)
        {
            _state = state;
        }

        _activity?.AddEvent(new ActivityEvent(state.ToString()));
        _logger.LogInformation("Scenario {ScenarioId} is {State}", Id, state);
        _recorder.Changed(this);
    }

    private void Finish(ScenarioState state, string error)
    {
        lock (_gate)
        {
            _state = state;
            _error = error;
            _endedAt = Timestamp.FromDateTime(DateTime.UtcNow);
        }

        _recorder.Changed(this);
    }

    /// <summary>Latency recorded since the previous call, in a histogram reused from tick to tick (one thread calls this).</summary>
    private LongHistogram TakeLatencyInterval()
    {
        var interval = _latencyInterval;
        interval.Reset();
        if (Spec.RoundTrip)
        {
            _roundTripReaders.ForEach(r => r.ReadInterval(interval));
        }
        else
        {
            _subscribers.ForEach(s => s.DrainLatencyInto(interval));
        }

        return interval;
    }

    private void UpdateInterval(long nowNs)
    {
        var latency = TakeLatencyInterval();
        RecordLatencyInterval(latency);
        double rate = _subscribers.Sum(s => s.ReceiveRate);
        var daemon = ProcessMetrics.Take();
        double agentsCpu = AgentsCpuSeconds();
        double seconds = (daemon.TakenAtNs - _tickDaemon.TakenAtNs) / 1e9;
        var interval = new IntervalStats
        {
            Elapsed = Duration.FromTimeSpan(TimeSpan.FromTicks((nowNs - _startedNs) / 100)),
            MessagesPerSecond = rate,
            BytesPerSecond = rate * Spec.PayloadBytes,
            Latency = StatsFormatting.ToLatency(latency, Spec.RoundTrip),
            DaemonCpuPercent = ProcessMetrics.CpuPercent(_tickDaemon, daemon),
            // Agents report once a second on their own clock: a tick may see one report more or fewer than the last.
            AgentsCpuPercent = seconds > 0 ? Math.Max(0, agentsCpu - _tickAgentsCpuSeconds) / seconds * 100 : 0,
        };
        _tickDaemon = daemon;
        _tickAgentsCpuSeconds = agentsCpu;
        lock (_gate)
        {
            _totalLatency.Add(latency);
            _lastInterval = interval;
        }

        // The series the database keeps: one point per tick, queued (never awaited) on this tick thread.
        _recorder.Interval(this, interval);
    }

    /// <summary>Queues the interval's histogram, encoded as HdrHistogram logs carry it, with its wall-clock bounds.</summary>
    private void RecordLatencyInterval(LongHistogram interval)
    {
        long endMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        _recorder.LatencyInterval(this, new HdrInterval(_latencyIntervalIndex++, _latencyIntervalStartMs, endMs, _latencyCodec.Encode(interval)));
        _latencyIntervalStartMs = endMs;
    }

    /// <summary>CPU seconds of every agent since it started, as last reported; 0 in-process.</summary>
    private double AgentsCpuSeconds() => _subscribers.Sum(s => s.LatestProcessSample?.CpuSeconds ?? 0);

    /// <summary>The result as of now. Call under <see cref="_gate"/>.</summary>
    private ScenarioStats BuildStats()
    {
        var counters = _subscribers.Aggregate(default(ReceiverCounters), (sum, s) => sum + s.Counters);
        long sent = _publishers.Sum(p => p.Sent);
        long expected = sent * Spec.SubscribersPerPublisher;
        long endNs = _measureToNs > 0 ? _measureToNs : MonotonicClock.NowNs();
        double measuredSeconds = _measureFromNs > 0 && endNs > _measureFromNs ? (endNs - _measureFromNs) / 1e9 : 0;
        var stats = new ScenarioStats
        {
            MessagesSent = (ulong)sent,
            MessagesReceived = (ulong)counters.Received,
            MessagesExpected = (ulong)expected,
            MessagesLost = (ulong)Math.Max(0, expected - (counters.Received - counters.Duplicated)),
            MessagesCorrupted = (ulong)(counters.Corrupted + _publishers.Sum(p => p.BadEchoes)),
            MessagesDuplicated = (ulong)counters.Duplicated,
            MeasuredMessages = (ulong)counters.MeasuredReceived,
            MeasuredDuration = Duration.FromTimeSpan(TimeSpan.FromTicks((long)(measuredSeconds * TimeSpan.TicksPerSecond))),
            MessagesPerSecond = measuredSeconds > 0 ? counters.MeasuredReceived / measuredSeconds : 0,
            BytesPerSecond = measuredSeconds > 0 ? counters.MeasuredBytes / measuredSeconds : 0,
            Latency = StatsFormatting.ToLatency(_totalLatency, Spec.RoundTrip),
        };

        var now = ProcessMetrics.Take();
        var daemonStart = _daemonAtStart ?? now;
        var daemonEnd = _daemonAtEnd ?? now;
        stats.Processes.Add(new ProcessStats
        {
            Role = "daemon",
            Index = -1,
            Pid = Environment.ProcessId,
            CpuSeconds = daemonEnd.CpuSeconds - daemonStart.CpuSeconds,
            CpuPercent = ProcessMetrics.CpuPercent(daemonStart, daemonEnd),
            PeakRssBytes = now.PeakRssBytes,
        });
        foreach (var subscriber in _subscribers)
        {
            if (subscriber.Process is { } process)
            {
                stats.Processes.Add(process);
            }
        }

        return stats;
    }

    /// <summary>
    /// The counters and latency histogram /metrics exports, read as they are (a few volatile reads and one pass over the
    /// histogram under the gate); final, and cached, once the scenario has completed.
    /// </summary>
    public ScenarioMetricsSnapshot ReadMetrics()
    {
        if (Volatile.Read(ref _finalMetrics) is { } final)
        {
            return final;
        }

        bool completed = _completed.Task.IsCompleted;
        ScenarioState state;
        DateTime? startedAt;
        DateTime? endedAt;
        PublisherMetrics[] publishers;
        LatencyBuckets latency;
        lock (_gate)
        {
            state = _state;
            startedAt = _startedAt?.ToDateTime();
            endedAt = _endedAt?.ToDateTime();
            publishers = [.. _publishers.Select((p, i) => new PublisherMetrics(i, p.Sent, p.BadEchoes))];
            latency = _totalLatency.TotalCount == 0 ? LatencyBuckets.Empty : LatencyBuckets.From(_totalLatency);
        }

        // Subscribers are all added while STARTING and never after (a failure while starting leaves the list as it was).
        SubscriberMetrics[] subscribers = state is ScenarioState.Pending or ScenarioState.Starting
            ? []
            : [.. _subscribers.Select(s => new SubscriberMetrics(s.Index, s.Counters, s.LatestProcessSample))];

        long fromNs = _measureFromNs;
        long toNs = _measureToNs > 0 ? _measureToNs : MonotonicClock.NowNs();
        double measuredSeconds = fromNs > 0 && toNs > fromNs ? (toNs - fromNs) / 1e9 : 0;
        var metrics = new ScenarioMetricsSnapshot(
            Id, Spec, state, CreatedAt.ToDateTime(), startedAt, endedAt, measuredSeconds,
            subscribers.Sum(s => s.Counters.MeasuredReceived), subscribers.Sum(s => s.Counters.MeasuredBytes),
            publishers, subscribers, latency);
        if (completed)
        {
            Volatile.Write(ref _finalMetrics, metrics);
        }

        return metrics;
    }

    public Scenario Snapshot()
    {
        lock (_gate)
        {
            var scenario = new Scenario
            {
                Id = Id,
                Spec = Spec.ToProto(),
                State = _state,
                Error = _error,
                CreatedAt = CreatedAt,
                StartedAt = _startedAt,
                EndedAt = _endedAt,
                Environment = _environment,
                LastInterval = _lastInterval,
                StorageError = _recorder.ErrorFor(Id) ?? string.Empty,
            };
            if (_finalStats is not null)
            {
                scenario.Stats = _finalStats;
            }
            else if (_state is not ScenarioState.Pending and not ScenarioState.Starting)
            {
                scenario.Stats = BuildStats();
            }

            return scenario;
        }
    }
}
