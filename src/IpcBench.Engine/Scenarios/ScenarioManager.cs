using System.Collections.Concurrent;
using System.Security.Cryptography;
using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Scenarios;

/// <summary>Starts scenarios in the background, keeps them (and their results) by id, and stops them all on shutdown.</summary>
public sealed class ScenarioManager(
    IOptions<DaemonOptions> options,
    RuntimeDirectory runtime,
    AgentLauncher launcher,
    AgentDirectory agents,
    AgentPool pool,
    AdmissionControl admission,
    IScenarioRecorder recorder,
    ILoggerFactory loggers,
    IProbeHistory? probes = null) : IHostedLifecycleService
{
    private readonly ConcurrentDictionary<string, ScenarioEntry> _scenarios = new();
    private readonly ConcurrentQueue<string> _order = new();
    private readonly ScenarioServices _services = new(options.Value, runtime, launcher, agents, pool, recorder, loggers.CreateLogger("IpcBench.Scenario"))
    {
        Probes = probes ?? NoProbeHistory.Instance,
    };
    private readonly object _admission = new();
    // Suites holding an admission slot for their whole run, between cells too.
    private readonly HashSet<string> _suiteSlots = new(StringComparer.Ordinal);
    private volatile bool _shuttingDown;
    private long _started;

    /// <summary>Scenarios started since the daemon started (retained or not).</summary>
    public long StartedCount => Interlocked.Read(ref _started);

    public bool IsShuttingDown => _shuttingDown;

    /// <summary>Agent processes kept warm between scenarios, idle now.</summary>
    public int IdleAgents => pool.IdleCount;

    /// <summary>Starts a scenario of a spec the control plane has validated (SpecValidator).</summary>
    /// <param name="suiteId">The suite this scenario is a cell of: it runs in that suite's slot.</param>
    public ScenarioRun Start(ResolvedSpec resolved, string suiteId = "", string resumedFrom = "")
    {
        if (resolved.Transport.Capabilities.CrossProcess && launcher.UnavailableReason is { } reason)
        {
            throw new RequestRefusedException(RefusalKind.FailedPrecondition, field: null, $"agents cannot be started: {reason}");
        }

        lock (_admission)
        {
            if (_shuttingDown)
            {
                throw new RequestRefusedException(RefusalKind.Unavailable, field: null, "the daemon is shutting down");
            }

            // 12 hex digits: unique enough, and short enough for socket paths (108-byte limit).
            var id = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(6));
            var claim = admission.ClaimFor(resolved, id);
            admission.Admit(claim, Running(exceptSuite: suiteId));
            var run = new ScenarioRun(id, resolved, _services) { Claim = claim, SuiteId = suiteId, ResumedFrom = resumedFrom };
            var entry = new ScenarioEntry(run);
            _scenarios[id] = entry;
            recorder.Changed(run);
            _order.Enqueue(id);
            Interlocked.Increment(ref _started);
            Trim();
            // The scenario outlives the StartScenario call: it must not carry that request's log scope (RequestId, ...)
            // or its span as parent; its own trace links to the call instead (ScenarioRun.StartedBy).
            using (ExecutionContext.SuppressFlow())
            {
                _ = Task.Run(async () =>
                {
                    try
                    {
                        await run.RunAsync().ConfigureAwait(false);
                    }
                    finally
                    {
                        entry.Retire();
                    }
                });
            }

            return run;
        }
    }

    /// <summary>
    /// Takes one admission slot for a suite's whole run (false when none is free): its cells then run in it one at a time,
    /// and no other scenario takes the slot between two cells.
    /// </summary>
    public bool TryReserveSuiteSlot(string suiteId)
    {
        lock (_admission)
        {
            if (_shuttingDown)
            {
                throw new RequestRefusedException(RefusalKind.Unavailable, field: null, "the daemon is shutting down");
            }

            try
            {
                admission.Admit(default, Running(exceptSuite: string.Empty));
            }
            catch (RequestRefusedException e) when (e.Kind == RefusalKind.ResourceExhausted)
            {
                return false;
            }

            return _suiteSlots.Add(suiteId);
        }
    }

    public void ReleaseSuiteSlot(string suiteId)
    {
        lock (_admission)
        {
            _suiteSlots.Remove(suiteId);
        }
    }

    /// <summary>What running scenarios and suites hold; a suite between cells holds its slot with nothing else.</summary>
    private List<AdmissionControl.Claim> Running(string exceptSuite)
    {
        var claims = new List<AdmissionControl.Claim>();
        var suitesRunningACell = new HashSet<string>(StringComparer.Ordinal);
        foreach (var entry in _scenarios.Values.Where(s => s.HoldsResources))
        {
            if (entry.SuiteId.Length > 0 && entry.SuiteId == exceptSuite)
            {
                continue;
            }

            suitesRunningACell.Add(entry.SuiteId);
            claims.Add(entry.Claim);
        }

        claims.AddRange(_suiteSlots.Where(s => s != exceptSuite && !suitesRunningACell.Contains(s)).Select(_ => default(AdmissionControl.Claim)));
        return claims;
    }

    /// <summary>The scenario if this daemon holds it in memory (running, or finished and retained).</summary>
    public ScenarioEntry? Find(string id) => _scenarios.GetValueOrDefault(id);

    /// <summary>The scenarios held in memory, oldest first.</summary>
    public IReadOnlyList<ScenarioEntry> List() =>
        [.. _order.Select(id => _scenarios.GetValueOrDefault(id)).OfType<ScenarioEntry>()];

    /// <summary>Drops the oldest finished scenarios beyond the retention limit.</summary>
    private void Trim()
    {
        while (_scenarios.Count > options.Value.MaxRetainedScenarios && _order.TryPeek(out var oldest)
            && _scenarios.TryGetValue(oldest, out var entry) && entry.IsCompleted)
        {
            _order.TryDequeue(out _);
            _scenarios.TryRemove(oldest, out _);
        }
    }

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>
    /// Runs before any hosted service stops, so the gRPC server still carries the agents' final reports: scenarios end
    /// STOPPED with their results rather than FAILED with their connections cut.
    /// </summary>
    public async Task StoppingAsync(CancellationToken cancellationToken)
    {
        lock (_admission)
        {
            _shuttingDown = true;
        }

        var running = _scenarios.Values.Select(s => s.Live).OfType<ScenarioRun>().Where(r => !r.Completion.IsCompleted).ToList();
        if (running.Count > 0)
        {
            _services.Logger.LogInformation("Shutting down: stopping {Count} running scenarios", running.Count);
            running.ForEach(s => s.RequestStop());
            var all = Task.WhenAll(running.Select(s => s.Completion));
            await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(4), cancellationToken)).ConfigureAwait(false);
        }

        // While the gRPC server still runs: warm agents read the end of their streams and exit on their own.
        await pool.CloseAllAsync().ConfigureAwait(false);
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
