using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// Where suites are kept across daemon restarts: the database (Persistence/StoredSuiteArchive), or nowhere. The engine
/// hands it snapshots as data and reads them back; how and where they are stored is the host's.
/// </summary>
public interface ISuiteArchive
{
    /// <summary>Keeps the suite as it is now. A failed write is the archive's to report (logged), never the suite's.</summary>
    void Write(SuiteSnapshot suite);

    /// <summary>A stored suite, or null; a store that cannot be read is refused as UNAVAILABLE (RequestRefusedException).</summary>
    SuiteSnapshot? Get(string id);

    /// <summary>Every stored suite (none when nothing is stored).</summary>
    IReadOnlyList<SuiteSnapshot> All();
}

/// <summary>An archive that keeps nothing: where no database is wired in.</summary>
public sealed class NoSuiteArchive : ISuiteArchive
{
    public static readonly NoSuiteArchive Instance = new();

    public void Write(SuiteSnapshot suite)
    {
    }

    public SuiteSnapshot? Get(string id) => null;

    public IReadOnlyList<SuiteSnapshot> All() => [];
}
