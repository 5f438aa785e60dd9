using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// Every scenario the daemon can answer for: those it runs or holds in memory (their live snapshot wins) and those in
/// the database, including those of earlier daemons.
/// </summary>
public sealed class ScenarioCatalog(ScenarioManager scenarios, StoreWriter writer, ILogger<ScenarioCatalog> logger)
{
    /// <param name="field">The request field <paramref name="id"/> came from, as errors name it.</param>
    public ScenarioSnapshot Get(string id, string field = "id") => Find(id, field).Scenario;

    /// <summary>The run while it runs, and the scenario as it is now; NOT_FOUND when neither memory nor the database has it.</summary>
    public (ScenarioRun? Run, ScenarioSnapshot Scenario) Find(string id, string field = "id")
    {
        if (string.IsNullOrEmpty(id))
        {
            throw new RequestRefusedException(RefusalKind.InvalidArgument, field, "is required");
        }

        if (scenarios.Find(id) is { } held)
        {
            return held.Live is { } run ? (run, run.Snapshot()) : (null, held.Snapshot(writer.ErrorFor));
        }

        var stored = Read(store => store.Get(id));
        return stored is null ? throw new RequestRefusedException(RefusalKind.NotFound, field, $"no scenario '{id}'") : (null, stored);
    }

    /// <summary>A page, newest first, and whether more follow it.</summary>
    public (IReadOnlyList<ScenarioSnapshot> Scenarios, bool More) List(ScenarioFilter filter, ScenarioKey? after, int pageSize)
    {
        var live = scenarios.List().Select(s => s.Snapshot(writer.ErrorFor))
            .Where(s => filter.Matches(s) && (after is not { } a || ScenarioKey.Of(s).CompareTo(a) > 0));
        // One more than a page tells whether another page follows; the newest page of the union of both sources is
        // within the live ones and the page + 1 newest stored ones.
        var stored = Read(store => store.Query(filter, after, pageSize + 1)) ?? [];
        var merged = new Dictionary<string, ScenarioSnapshot>(StringComparer.Ordinal);
        foreach (var scenario in stored)
        {
            merged[scenario.Id] = scenario;
        }

        foreach (var scenario in live)
        {
            merged[scenario.Id] = scenario;
        }

        var ordered = merged.Values.OrderBy(ScenarioKey.Of).ToList();
        return ordered.Count > pageSize ? (ordered[..pageSize], true) : (ordered, false);
    }

    /// <summary>A scenario with its per-second series, as exports carry it.</summary>
    public ScenarioResult Record(ScenarioSnapshot scenario) => new(scenario, Read(store => store.Series(scenario.Id)) ?? []);

    /// <summary>A scenario's per-second latency histograms, as the .hlog export carries them; none without a database.</summary>
    public IReadOnlyList<HdrInterval> LatencyIntervals(string id) => Read(store => store.LatencyIntervals(id)) ?? [];

    /// <summary>A scenario's soak points (rate, latency, every process's resources), for its soak page; none without a database.</summary>
    public IReadOnlyList<SoakPoint> SoakPoints(string id) => Read(store => store.SoakPoints(id)) ?? [];

    /// <summary>A read of the database; null without one. A database that fails to answer is UNAVAILABLE, not a crash.</summary>
    private T? Read<T>(Func<ScenarioStore, T> read)
        where T : class?
    {
        if (writer.Store is not { } store)
        {
            return null;
        }

        try
        {
            return read(store);
        }
        catch (Exception e) when (e is SqliteException or IOException or InvalidOperationException or Google.Protobuf.InvalidProtocolBufferException)
        {
            logger.LogError(e, "Reading the scenario database {DatabasePath} failed", store.Path);
            throw new RequestRefusedException(RefusalKind.Unavailable, field: null, $"the scenario database cannot be read: {e.Message}");
        }
    }
}
