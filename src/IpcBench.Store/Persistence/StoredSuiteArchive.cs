using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Scenarios;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// Suites in the scenario database (<see cref="SuiteStore"/>), through the writer's store: nothing is kept when the
/// daemon runs without a database. A failed write is logged and the suite goes on; a failed read refuses the request.
/// </summary>
public sealed class StoredSuiteArchive(StoreWriter writer, ILogger<StoredSuiteArchive> logger) : ISuiteArchive
{
    public void Write(SuiteSnapshot suite)
    {
        if (writer.Store is not { } store)
        {
            return;
        }

        try
        {
            new SuiteStore(store).Write(suite, ProcessIdentity.Current);
        }
        catch (Exception e) when (e is SqliteException or IOException or InvalidOperationException)
        {
            logger.LogError(e, "Saving suite {SuiteId} to {DatabasePath} failed", suite.Id, store.Path);
        }
    }

    public SuiteSnapshot? Get(string id) => Read(store => store.Get(id));

    public IReadOnlyList<SuiteSnapshot> All() => Read(store => store.All()) ?? [];

    private T? Read<T>(Func<SuiteStore, T> read)
        where T : class?
    {
        if (writer.Store is not { } store)
        {
            return null;
        }

        try
        {
            return read(new SuiteStore(store));
        }
        catch (Exception e) when (e is SqliteException or IOException or InvalidOperationException or System.Text.Json.JsonException)
        {
            logger.LogError(e, "Reading suites from {DatabasePath} failed", store.Path);
            throw new RequestRefusedException(RefusalKind.Unavailable, field: null, $"the scenario database cannot be read: {e.Message}");
        }
    }
}
