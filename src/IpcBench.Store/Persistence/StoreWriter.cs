using System.Collections.Concurrent;
using System.Threading.Channels;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// The one thread that writes to the database. Scenarios hand it snapshots and series points through a bounded
/// queue and never wait: a slow disk, a locked or broken database costs a run nothing. A write that fails (or finds
/// the queue full) is logged once per scenario and error, counted (ipcbench_store_write_failures_total) and shown on
/// the scenario as storage_error. At start it opens the database, fails the scenarios a dead daemon left running and
/// applies retention; on shutdown it writes what is queued before the host stops.
/// </summary>
public sealed class StoreWriter : IHostedService, IDisposable
{
    private const int QueueCapacity = 65_536;
    private const int BatchSize = 512;

    private readonly DaemonOptions _options;
    private readonly ILogger<StoreWriter> _logger;
    private readonly Channel<Item> _queue = Channel.CreateBounded<Item>(new BoundedChannelOptions(QueueCapacity)
    {
        SingleReader = true,
        FullMode = BoundedChannelFullMode.Wait,
    });

    private readonly ConcurrentDictionary<string, string> _errors = new(StringComparer.Ordinal);
    private Task _drain = Task.CompletedTask;
    private long _failures;
    private long _written;

    public StoreWriter(IOptions<DaemonOptions> options, ILogger<StoreWriter> logger)
    {
        _options = options.Value;
        _logger = logger;
        Path = _options.ResolveDatabasePath();
    }

    public string Path { get; }

    /// <summary>The open database; null when it could not be opened (see <see cref="UnavailableReason"/>).</summary>
    public ScenarioStore? Store { get; private set; }

    public string? UnavailableReason { get; private set; }

    /// <summary>Writes (snapshots or series points) that did not reach the database since the daemon started.</summary>
    public long WriteFailures => Interlocked.Read(ref _failures);

    public long WritesCompleted => Interlocked.Read(ref _written);

    /// <summary>Why this scenario's record in the database is incomplete, if it is.</summary>
    public string? ErrorFor(string scenarioId) => _errors.GetValueOrDefault(scenarioId);

    public Task StartAsync(CancellationToken cancellationToken)
    {
        Open(new ScenarioStore(Path));
        StartDrain();
        return Task.CompletedTask;
    }

    internal void StartDrain() =>
        _drain = Task.Factory.StartNew(DrainAsync, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap();

    /// <summary>Opens <paramref name="store"/> and does the start-up housekeeping; a failure leaves the daemon running without a database.</summary>
    internal void Open(ScenarioStore store)
    {
        try
        {
            store.Initialize();
            Store = store;
        }
        catch (Exception e)
        {
            UnavailableReason = $"database {store.Path} cannot be opened: {e.Message}";
            _logger.LogError(e, "Scenario database {DatabasePath} cannot be opened; results will not survive a restart", store.Path);
            return;
        }

        // Housekeeping that fails (e.g. another daemon holds the write lock for longer than the busy timeout) is
        // retried at the next start; the database stays in use meanwhile.
        try
        {
            foreach (var id in store.FailOrphans(ProcessIdentity.IsAlive, DateTime.UtcNow))
            {
                _logger.LogWarning("Scenario {ScenarioId} was still running when its daemon stopped; marked FAILED: {Error}", id, ScenarioStore.DaemonRestartedError);
            }
        }
        catch (Exception e)
        {
            _logger.LogError(e, "Marking the scenarios of dead daemons as failed in {DatabasePath} failed", store.Path);
        }

        try
        {
            foreach (var id in new SuiteStore(store).FailOrphans(ProcessIdentity.IsAlive, DateTime.UtcNow))
            {
                _logger.LogWarning("Suite {SuiteId} was still running when its daemon stopped; marked FAILED: {Error}", id, ScenarioStore.DaemonRestartedError);
            }
        }
        catch (Exception e)
        {
            _logger.LogError(e, "Marking the suites of dead daemons as failed in {DatabasePath} failed", store.Path);
        }

        ApplyRetention();
        try
        {
            _logger.LogInformation("Scenario database {DatabasePath}: {Count} scenarios", store.Path, store.Count());
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "Counting the scenarios in {DatabasePath} failed", store.Path);
        }
    }

    internal void Enqueue(StoreWrite write) => Enqueue(write.ScenarioId, () => write);

    /// <summary>
    /// Queues a write and never throws: <paramref name="write"/> is built here, so a failure to build it (e.g. a
    /// snapshot that throws) is a storage error of the scenario, not an error of the run that called.
    /// </summary>
    public void Enqueue(string scenarioId, Func<StoreWrite> write)
    {
        try
        {
            if (!_queue.Writer.TryWrite(new Item(write(), null)))
            {
                Failed(scenarioId, 1, null, _drain.IsCompleted
                    ? "the scenario database is closed (the daemon is stopping)"
                    : $"the scenario database is {QueueCapacity} writes behind; this write was dropped");
            }
        }
        catch (Exception e)
        {
            // Whatever goes wrong with storage stays here: the run that called must go on.
            Failed(scenarioId, 1, e, e.Message);
        }
    }

    /// <summary>Completes once every write queued before the call has been written (or has failed).</summary>
    public async Task FlushAsync(CancellationToken cancellationToken = default)
    {
        var flushed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        if (!_queue.Writer.TryWrite(new Item(null, flushed)))
        {
            await _drain.WaitAsync(cancellationToken).ConfigureAwait(false);
            return;
        }

        await flushed.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        // Scenarios have ended by now (ScenarioManager stops them first); their final snapshots are in the queue.
        _queue.Writer.TryComplete();
        try
        {
            await _drain.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            _logger.LogError("Shutdown timed out with {Count} scenario database writes not done", _queue.Reader.Count);
        }
    }

    private async Task DrainAsync()
    {
        var batch = new List<StoreWrite>(BatchSize);
        var flushes = new List<TaskCompletionSource>();
        while (await _queue.Reader.WaitToReadAsync().ConfigureAwait(false))
        {
            while (batch.Count < BatchSize && _queue.Reader.TryRead(out var item))
            {
                if (item.Write is { } write)
                {
                    batch.Add(write);
                }

                if (item.Flushed is { } flushed)
                {
                    flushes.Add(flushed);
                }
            }

            if (batch.Count > 0)
            {
                WriteBatch(batch);
            }

            batch.Clear();
            flushes.ForEach(f => f.TrySetResult());
            flushes.Clear();
        }
    }

    private void WriteBatch(List<StoreWrite> batch)
    {
        if (Store is not { } store)
        {
            foreach (var group in batch.GroupBy(w => w.ScenarioId))
            {
                Failed(group.Key, group.Count(), null, UnavailableReason ?? "no scenario database");
            }

            return;
        }

        for (int i = 0; i < batch.Count; i++)
        {
            if (batch[i].Scenario is { } scenario && ErrorFor(scenario.Id) is { } error)
            {
                // The row says so itself when an earlier write of this scenario was lost.
                batch[i] = batch[i] with { Scenario = scenario with { StorageError = error } };
            }
        }

        try
        {
            store.Write(batch, ProcessIdentity.Current);
            Interlocked.Add(ref _written, batch.Count);
        }
        catch (Exception e)
        {
            foreach (var group in batch.GroupBy(w => w.ScenarioId))
            {
                Failed(group.Key, group.Count(), e, $"writing to the scenario database failed: {e.Message}");
            }

            return;
        }

        if (batch.Any(w => w.Scenario is { } s && s.IsFinished))
        {
            ApplyRetention();
        }
    }

    private void ApplyRetention()
    {
        if (Store is not { } store)
        {
            return;
        }

        try
        {
            DateTime? olderThan = _options.RetentionDays > 0 ? DateTime.UtcNow.AddDays(-_options.RetentionDays) : null;
            var deleted = store.Trim(_options.MaxRetainedScenarios, olderThan);
            if (deleted.Count > 0)
            {
                _logger.LogInformation("Retention deleted {Count} finished scenarios from the database (IpcBench:MaxRetainedScenarios {Max}, RetentionDays {Days})",
                    deleted.Count, _options.MaxRetainedScenarios, _options.RetentionDays);
            }
        }
        catch (Exception e)
        {
            Interlocked.Increment(ref _failures);
            _logger.LogError(e, "Applying retention to the scenario database failed");
        }
    }

    private void Failed(string scenarioId, int writes, Exception? exception, string message)
    {
        Interlocked.Add(ref _failures, writes);
        // One log line per scenario and cause, not one a second for as long as the disk stays full.
        if (_errors.TryGetValue(scenarioId, out var previous) && previous == message)
        {
            return;
        }

        _errors[scenarioId] = message;
        _logger.LogError(exception, "Scenario {ScenarioId}: {Writes} database writes failed: {StorageError}", scenarioId, writes, message);
    }

    public void Dispose() => _queue.Writer.TryComplete();

    private sealed record Item(StoreWrite? Write, TaskCompletionSource? Flushed);
}
