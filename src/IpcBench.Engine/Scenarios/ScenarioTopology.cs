using HdrHistogram;
using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Subscribers;
using IpcBench.Transports;
using IpcBench.Workload;
using IpcBench.Workload.Placement;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The publishers and subscribers of one scenario: creates them, connects them, runs the publishers on their own
/// threads, stops them, and releases every endpoint, agent and thread. Failures go to the scenario's
/// <see cref="FailureLog"/>; counters are read by the scenario's <see cref="ScenarioMeter"/>.
/// </summary>
internal sealed class ScenarioTopology(
    string scenarioId, ResolvedSpec spec, ScenarioServices services, FailureLog failures, CancellationToken abort)
{
    private readonly object _gate = new();
    private readonly List<IPublisherEndpoint> _endpoints = [];
    private readonly List<PublisherWorker> _publishers = [];
    private readonly List<IntervalHistogramReader> _roundTripReaders = [];
    private readonly List<Thread> _publisherThreads = [];
    private readonly List<SubscriberHandle> _subscribers = [];
    private int _endpointsDisposed;
    private IDisposable? _memoryLock;

    private DaemonOptions Options => services.Options;

    /// <summary>
    /// Every subscriber; all are added while STARTING and never after (a failure while starting leaves the list as it
    /// was), so readers after STARTING see a list that no longer changes.
    /// </summary>
    public IReadOnlyList<SubscriberHandle> Subscribers => _subscribers;

    /// <summary>Creates publishers and subscribers and waits until all are ready; false when a stop came first.</summary>
    public async Task<bool> SetUpAsync(Task stopRequested)
    {
        var transport = spec.Transport;
        if (spec.Placement.LockMemory)
        {
            // Before the endpoints map their buffers, so those are locked as they are mapped. The daemon stays locked
            // while any scenario that asked for it runs (MemoryLock counts them).
            try
            {
                _memoryLock = MemoryLock.Acquire();
            }
            catch (PlacementException e)
            {
                throw new ScenarioFailureException($"lock_memory: {e.Message}");
            }
        }

        for (int p = 0; p < spec.Publishers; p++)
        {
            _endpoints.Add(transport.CreatePublisher(spec.PublisherOptions(services.Runtime.TransportEnvironment, scenarioId, p)));
        }

        var startTimeout = TimeSpan.FromSeconds(Options.AgentStartTimeoutSeconds);
        var accepting = _endpoints
            .Select(e => Task.Factory.StartNew(
                () => e.WaitForSubscribers(spec.SubscribersPerPublisher, startTimeout, abort),
                abort, TaskCreationOptions.LongRunning, TaskScheduler.Default))
            .ToList();

        for (int s = 0; s < spec.Subscribers; s++)
        {
            var addresses = spec.PublishersOf(s).Select(p => new PublisherAddress(p, _endpoints[p].Address));
            var setup = SubscriberSetupResolver.Resolve(spec, services.Runtime.TransportEnvironment, Options, scenarioId, s, addresses);
            if (transport.Capabilities.CrossProcess)
            {
                var session = new AgentSession(scenarioId, s, setup, (message, isCause) => failures.Fail(isCause ? 3 : 2, message), services.Logger);
                _subscribers.Add(session);
                services.Agents.Add(session);
                // lock_memory: a fresh agent locks its memory for the rest of its life, so it neither takes a warm one nor is kept.
                if (!spec.Placement.LockMemory && services.Pool.TryTake() is { } warm)
                {
                    warm.Assign(session);
                }
                else
                {
                    services.Launcher.Launch(session);
                }
            }
            else
            {
                var host = SubscriberHost.Connect(transport, setup, abort);
                _subscribers.Add(new LocalSubscriber(s, host));
            }
        }

        var allReady = Task.WhenAll(accepting.Concat(_subscribers.Select(s => s.Ready)));
        var timeout = Task.Delay(startTimeout + TimeSpan.FromSeconds(1));
        var first = await Task.WhenAny(allReady, timeout, failures.First, stopRequested).ConfigureAwait(false);
        if (first == timeout)
        {
            var notReady = _subscribers.Where(s => !s.Ready.IsCompletedSuccessfully).Select(s => s.Name).ToList();
            throw new ScenarioFailureException(notReady.Count > 0
                ? $"{string.Join(", ", notReady)} did not become ready within {startTimeout.TotalSeconds:0} s"
                : $"publishers of transport '{spec.Transport.Id}' did not see all subscribers connect within {startTimeout.TotalSeconds:0} s");
        }

        if (first == failures.First)
        {
            throw new ScenarioFailureException(failures.First.Result);
        }

        if (first == stopRequested)
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

    /// <summary>The publishers are starting: every subscriber's warmup begins.</summary>
    public void StartWarmup()
    {
        foreach (var subscriber in _subscribers)
        {
            subscriber.StartWarmup();
        }
    }

    /// <summary>The measured window began at <paramref name="fromNs"/>: every subscriber is told.</summary>
    public void StartMeasurement(long fromNs)
    {
        foreach (var subscriber in _subscribers)
        {
            subscriber.StartMeasurement(fromNs);
        }
    }

    /// <summary>
    /// Reads the JIT time of the daemon (now) and of every agent (at its latest report) into <paramref name="settling"/>,
    /// and says whether all of them have settled.
    /// </summary>
    public bool CodeSettled(CodeSettling settling, long nowNs)
    {
        const string daemon = "daemon";
        settling.Observe(daemon, System.Runtime.JitInfo.GetCompilationTime(), nowNs);
        var processes = new List<string>(_subscribers.Count + 1) { daemon };
        foreach (var subscriber in _subscribers)
        {
            if (subscriber is not LocalSubscriber)
            {
                string key = "agent " + subscriber.Index.ToString(System.Globalization.CultureInfo.InvariantCulture);
                processes.Add(key);
                if (subscriber.JitTime is { } reported)
                {
                    settling.Observe(key, reported.Jit, reported.ReportedAtNs);
                }
            }
        }

        return settling.Settled(processes);
    }

    /// <summary>Creates a publisher worker per endpoint, counting into <paramref name="window"/>; they start with <see cref="StartPublishers"/>.</summary>
    public void CreatePublishers(MeasurementWindow window)
    {
        lock (_gate)
        {
            // Under the gate: metrics read the publishers from other threads.
            for (int p = 0; p < spec.Publishers; p++)
            {
                var worker = new PublisherWorker(_endpoints[p], new PublisherPlan(p, spec.PayloadBytes, spec.FullPayload, spec.RatePerPublisher,
                    spec.RoundTrip, spec.SubscribersPerPublisher, spec.WaitMode, LatencySampleEvery: spec.LatencySampleEvery), window);
                _publishers.Add(worker);
                _roundTripReaders.Add(new IntervalHistogramReader(worker.RoundTripLatency));
                var placement = spec.Placement.ForPublisher(p);
                _publisherThreads.Add(new Thread(() => RunPublisher(worker, placement)) { IsBackground = true, Name = $"pub{p}" });
            }
        }
    }

    public void StartPublishers() => _publisherThreads.ForEach(t => t.Start());

    /// <summary>
    /// Whether every publisher has a message through: sent one, or in a round trip sent a second, which it does only
    /// once every echo of the first came back.
    /// </summary>
    public bool FirstMessagesThrough()
    {
        long through = spec.RoundTrip ? 2 : 1;
        lock (_gate)
        {
            return _publishers.TrueForAll(p => p.Sent >= through);
        }
    }

    /// <summary>Every publisher's counters as of now.</summary>
    public PublisherMetrics[] PublisherCounters()
    {
        lock (_gate)
        {
            return [.. _publishers.Select((p, i) => new PublisherMetrics(i, p.Sent, p.BadEchoes))];
        }
    }

    /// <summary>
    /// Adds every publisher's sender lag so far to <paramref name="into"/>: exact once the publishers stopped, a
    /// snapshot while they run (as interval reads of their histograms are).
    /// </summary>
    public void MergeSenderLagInto(HistogramBase into)
    {
        lock (_gate)
        {
            _publishers.ForEach(p => into.Add(p.SenderLag));
        }
    }

    /// <summary>Adds the latency recorded since the previous call: round trips at the publishers, else one-way at the subscribers.</summary>
    public void DrainLatencyInto(HistogramBase into)
    {
        if (spec.RoundTrip)
        {
            _roundTripReaders.ForEach(r => r.ReadInterval(into));
        }
        else
        {
            _subscribers.ForEach(s => s.DrainLatencyInto(into));
        }
    }

    public double ReceiveRate => _subscribers.Sum(s => s.ReceiveRate);

    /// <summary>CPU seconds of every agent since it started, as last reported; 0 in-process.</summary>
    public double AgentsCpuSeconds => _subscribers.Sum(s => s.LatestProcessSample?.CpuSeconds ?? 0);

    /// <summary>
    /// Fails the scenario when an agent stops reporting: a stopped (SIGSTOP) or hung process keeps its sockets open, so
    /// nothing else notices, and its publishers would wait for it forever.
    /// </summary>
    public async Task WatchHeartbeatsAsync()
    {
        long timeoutNs = Options.HeartbeatTimeoutSeconds * 1_000_000_000L;
        var period = TimeSpan.FromMilliseconds(Math.Min(1000, Options.HeartbeatTimeoutSeconds * 250));
        var watch = new HeartbeatWatch(timeoutNs, (long)period.TotalNanoseconds, MonotonicClock.NowNs());
        try
        {
            while (true)
            {
                await Task.Delay(period, abort).ConfigureAwait(false);
                long now = MonotonicClock.NowNs();
                watch.Check(now);
                foreach (var subscriber in _subscribers)
                {
                    if (subscriber.LastHeardNs is { } heard && watch.IsHung(now, heard))
                    {
                        failures.Fail(3, string.Create(System.Globalization.CultureInfo.InvariantCulture,
                            $"{subscriber.Name} sent no report for {watch.SilenceNs(now, heard) / 1e9:0.0} s (it reports once a second; IpcBench:HeartbeatTimeoutSeconds is {Options.HeartbeatTimeoutSeconds}): it is hung or stopped, e.g. by SIGSTOP"));
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

    private void RunPublisher(PublisherWorker worker, ThreadPlacement placement)
    {
        try
        {
            // The thread pins and raises itself: sched_setaffinity and sched_setscheduler with pid 0 act on the caller only.
            placement.ApplyToCurrentThread($"publisher {worker.Plan.PublisherIndex}");
            worker.Run(abort);
        }
        catch (Exception e)
        {
            failures.Fail(1, $"publisher {worker.Plan.PublisherIndex} on '{spec.Transport.Id}' failed: {e.Message}");
        }
    }

    /// <summary>
    /// Asks every publisher to stop; with <paramref name="join"/>, waits for their threads, else closes their links so
    /// that blocked sends return.
    /// </summary>
    public void StopPublishers(bool join)
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
            if (!thread.Join(TimeSpan.FromSeconds(Options.DrainTimeoutSeconds)))
            {
                throw new ScenarioFailureException($"publisher thread {thread.Name} did not stop within {Options.DrainTimeoutSeconds} s: a subscriber stopped reading");
            }
        }
    }

    /// <summary>Lets every subscriber drain and collects its final counters; throws when the scenario failed meanwhile.</summary>
    public async Task FinishSubscribersAsync()
    {
        var drain = TimeSpan.FromSeconds(Options.DrainTimeoutSeconds);
        var finishing = Task.WhenAll(_subscribers.Select(s => s.FinishAsync(drain, abort)));
        if (await Task.WhenAny(finishing, failures.First).ConfigureAwait(false) == failures.First)
        {
            throw new ScenarioFailureException(failures.First.Result);
        }

        await finishing.ConfigureAwait(false);
    }

    /// <summary>Releases endpoints, agents and threads, and the transport's leftovers; after the scenario's token was cancelled.</summary>
    public async Task ReleaseAsync()
    {
        await OffThePool.RunAsync(DisposeEndpoints).ConfigureAwait(false);

        // Agents that reported their result in a scenario that ended well may serve the next one (AgentPool checks them).
        bool endedWell = !failures.First.IsCompleted;
        await Task.WhenAll(_subscribers.Select(async s =>
        {
            if (s is AgentSession session)
            {
                services.Agents.Remove(session);
                if (endedWell && session.Finished && !spec.Placement.LockMemory && session.Connection is { } connection
                    && await services.Pool.TryKeepAsync(connection).ConfigureAwait(false))
                {
                    return;
                }
            }

            await s.DisposeAsync().ConfigureAwait(false);
        })).ConfigureAwait(false);

        await OffThePool.RunAsync(() => _publisherThreads.ForEach(thread => thread.Join(TimeSpan.FromSeconds(2)))).ConfigureAwait(false);

        _memoryLock?.Dispose();

        // Per-scenario housekeeping, e.g. the iceoryx2 ports and shared memory of an agent that died during this scenario.
        try
        {
            spec.Transport.RemoveStaleResources(services.Runtime.TransportEnvironment);
        }
        catch (Exception e)
        {
            services.Logger.LogWarning(e, "Removing stale resources of {Transport} failed", spec.Transport.Id);
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
                services.Logger.LogWarning(e, "Disposing a publisher endpoint failed");
            }
        }
    }
}
