using System.Collections.Concurrent;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// The probe history in memory, loaded from the database the first time a machine is asked for and written through to
/// it. A write runs off the scenario's path (a slow or broken database costs a run nothing but the history's survival
/// across a restart) and a failure is logged once.
/// </summary>
public sealed class StoredProbeHistory(StoreWriter writer, ILogger<StoredProbeHistory> logger) : IProbeHistory
{
    private readonly ConcurrentDictionary<string, MachineProbes> _machines = new(StringComparer.Ordinal);
    private int _failureLogged;

    public void Add(string machine, string cores, double roundTripNs, string scenarioId)
    {
        Of(machine).Add(roundTripNs);
        if (Store() is { } store)
        {
            var takenAt = DateTime.UtcNow;
            _ = Task.Run(() => Try(() => store.Add(machine, takenAt, cores, roundTripNs, scenarioId)));
        }
    }

    public PlacementClasses Classes(string machine) => Of(machine).Classes();

    private MachineProbes Of(string machine) => _machines.GetOrAdd(machine, m =>
    {
        IReadOnlyList<double> stored = [];
        if (Store() is { } store)
        {
            Try(() => stored = store.Latest(m, PlacementClasses.HistoryLimit));
        }

        return new MachineProbes(stored);
    });

    private ProbeStore? Store() => writer.Store is { } store ? new ProbeStore(store) : null;

    private void Try(Action action)
    {
        try
        {
            action();
        }
        catch (Exception e) when (e is Microsoft.Data.Sqlite.SqliteException or IOException or InvalidOperationException)
        {
            if (Interlocked.Exchange(ref _failureLogged, 1) == 0)
            {
                logger.LogWarning(e, "The core-to-core probe history could not be read or written; placement classes are learned from this run's probes only");
            }
        }
    }

    /// <summary>One machine's latest probes, and its classes learned once per change.</summary>
    private sealed class MachineProbes(IReadOnlyList<double> stored)
    {
        private readonly Queue<double> _probes = new(stored);
        private PlacementClasses? _classes;

        public void Add(double roundTripNs)
        {
            lock (_probes)
            {
                _probes.Enqueue(roundTripNs);
                while (_probes.Count > PlacementClasses.HistoryLimit)
                {
                    _probes.Dequeue();
                }

                _classes = null;
            }
        }

        public PlacementClasses Classes()
        {
            lock (_probes)
            {
                return _classes ??= PlacementClasses.Learn(_probes);
            }
        }
    }
}
