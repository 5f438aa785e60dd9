using IpcBench.Daemon.Core;
using IpcBench.Workload;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Agents;

/// <summary>
/// Agents kept warm between scenarios (<see cref="DaemonOptions.WarmAgentIdleSeconds"/>): a scenario that ended well
/// hands its agents here, and the next scenario to need agents takes them before starting new ones. An agent is kept
/// only when /proc shows its scenario left nothing in it; it is closed after the idle time, or when the daemon stops.
/// </summary>
public sealed class AgentPool : IAsyncDisposable
{
    private static readonly TimeSpan ExitGrace = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan LeftOverInterval = TimeSpan.FromMilliseconds(100);
    private const int LeftOverReadings = 5;

    private readonly object _gate = new();
    private readonly List<AgentConnection> _idle = [];
    private readonly long _idleNs;
    private readonly ILogger<AgentPool> _logger;
    private readonly Timer? _sweep;
    private bool _closed;

    public AgentPool(IOptions<DaemonOptions> options, ILogger<AgentPool> logger)
    {
        _logger = logger;
        _idleNs = options.Value.WarmAgentIdleSeconds * 1_000_000_000L;
        if (_idleNs > 0)
        {
            _sweep = new Timer(_ => CloseExpired(), null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));
        }
    }

    public bool Enabled => _idleNs > 0;

    /// <summary>Agents idle now.</summary>
    public int IdleCount
    {
        get
        {
            lock (_gate)
            {
                return _idle.Count;
            }
        }
    }

    /// <summary>A live idle agent, no longer in the pool; null when there is none.</summary>
    public AgentConnection? TryTake()
    {
        lock (_gate)
        {
            for (int i = _idle.Count - 1; i >= 0; i--)
            {
                var connection = _idle[i];
                _idle.RemoveAt(i);
                if (!connection.Exited.IsCompleted)
                {
                    return connection;
                }
            }
        }

        return null;
    }

    /// <summary>
    /// Keeps the agent of a scenario that ended well, when /proc shows nothing of the scenario left in it; false (and the
    /// caller ends the agent) otherwise.
    /// </summary>
    public async Task<bool> TryKeepAsync(AgentConnection connection)
    {
        if (!Enabled)
        {
            return false;
        }

        // What the agent may hold idle is IdleBaseline's rule. Some libraries close asynchronously (NetMQ's reaper
        // thread): a few readings before judging.
        var session = connection.Session;
        string transport = session?.Setup.Transport ?? string.Empty;
        int payload = session?.Setup.PayloadBytes ?? 0;
        IdleReading? reading = null;
        string? leftOver = null;
        for (int attempt = 0; attempt < LeftOverReadings; attempt++)
        {
            if (attempt > 0)
            {
                await Task.Delay(LeftOverInterval).ConfigureAwait(false);
            }

            reading = connection.Exited.IsCompleted ? null : IdleReading.Of(connection.Pid, (long)(session?.LatestProcessSample?.GcLiveBytes ?? 0));
            leftOver = reading is { } now ? connection.Baseline.LeftOver(now, transport, payload) : null;
            if (reading is null || leftOver is null)
            {
                break;
            }
        }

        if (reading is not { } idle)
        {
            return false;
        }

        if (leftOver is not null)
        {
            _logger.LogWarning("Not reusing agent pid {Pid} after {Scenarios} scenario(s), the last on {Transport}: {LeftOver}",
                connection.Pid, connection.ScenariosServed + 1, transport, leftOver);
            return false;
        }

        connection.Baseline.Accept(idle, transport, payload);

        _logger.LogInformation("Keeping agent pid {Pid} warm after {Scenarios} scenario(s): {Descriptors} descriptors, {SharedMappings} shared mappings, live heap {LiveHeapMiB:0.00} MiB",
            connection.Pid, connection.ScenariosServed + 1, idle.Descriptors, idle.SharedMappings, idle.LiveHeapBytes / 1048576.0);

        lock (_gate)
        {
            if (_closed)
            {
                return false;
            }

            connection.Release();
            connection.IdleSinceNs = MonotonicClock.NowNs();
            _idle.Add(connection);
        }

        // An idle agent that dies (killed, or its daemon's watchdog) leaves the pool by itself.
        _ = connection.Exited.ContinueWith(_ => Remove(connection), TaskScheduler.Default);
        return true;
    }

    /// <summary>Ends every idle agent and keeps no more: the daemon is stopping.</summary>
    public async Task CloseAllAsync()
    {
        List<AgentConnection> idle;
        lock (_gate)
        {
            _closed = true;
            idle = [.. _idle];
            _idle.Clear();
        }

        await Task.WhenAll(idle.Select(Stop)).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (_sweep is not null)
        {
            await _sweep.DisposeAsync().ConfigureAwait(false);
        }

        await CloseAllAsync().ConfigureAwait(false);
    }

    private void CloseExpired()
    {
        long now = MonotonicClock.NowNs();
        List<AgentConnection> expired;
        lock (_gate)
        {
            expired = _idle.FindAll(c => now - c.IdleSinceNs >= _idleNs);
            _idle.RemoveAll(expired.Contains);
        }

        foreach (var connection in expired)
        {
            _ = Stop(connection);
        }
    }

    private void Remove(AgentConnection connection)
    {
        lock (_gate)
        {
            _idle.Remove(connection);
        }
    }

    private Task Stop(AgentConnection connection) =>
        connection.StopAsync(ExitGrace, message => _logger.LogWarning("{Message}", message));
}
