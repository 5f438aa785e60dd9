using System.Collections.Concurrent;
using System.Security.Cryptography;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// Starts suites in the background and answers for every suite: those this daemon runs (live) and those in the
/// database (finished, or FAILED "daemon restarted"). StartSuite and `run` both come here.
/// </summary>
public sealed class SuiteManager(ScenarioManager scenarios, ISuiteArchive archive)
{
    private readonly ConcurrentDictionary<string, SuiteRun> _suites = new();
    private long _completedCells;

    /// <summary>Scenarios of suites finished since the daemon started (/metrics).</summary>
    public long CompletedCells => Interlocked.Read(ref _completedCells);

    public SuiteRun Start(SuitePlan plan)
    {
        if (scenarios.IsShuttingDown)
        {
            throw new RequestRefusedException(RefusalKind.Unavailable, field: null, "the daemon is shutting down");
        }

        // 12 hex digits as scenario ids, after an "s": a suite id is told from a scenario id in a log line.
        var suite = new SuiteRun("s" + Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(6)), plan, Record);
        _suites[suite.Id] = suite;
        Record(suite);
        using (ExecutionContext.SuppressFlow())
        {
            _ = Task.Run(() => suite.RunAsync(scenarios, () => Interlocked.Increment(ref _completedCells)));
        }

        return suite;
    }

    /// <summary>The live run (null once only the database has it) and the suite as it is now; NOT_FOUND when neither has it.</summary>
    public (SuiteRun? Run, SuiteSnapshot Suite) Find(string id, string field)
    {
        if (string.IsNullOrEmpty(id))
        {
            throw new RequestRefusedException(RefusalKind.InvalidArgument, field, "is required");
        }

        if (_suites.TryGetValue(id, out var run))
        {
            return (run, run.Snapshot());
        }

        return archive.Get(id) is { } stored
            ? (null, stored)
            : throw new RequestRefusedException(RefusalKind.NotFound, field, $"no suite '{id}'");
    }

    /// <summary>Every suite, live ones as they are now, newest first.</summary>
    public IReadOnlyList<SuiteSnapshot> List()
    {
        var all = archive.All().ToDictionary(s => s.Id, StringComparer.Ordinal);
        foreach (var run in _suites.Values)
        {
            all[run.Id] = run.Snapshot();
        }

        return [.. all.Values.OrderByDescending(s => s.CreatedAt).ThenByDescending(s => s.Id, StringComparer.Ordinal)];
    }

    /// <summary>Progress for /metrics: suites not finished, and the cells of the oldest running one.</summary>
    public (int Active, int Done, int Total) Progress()
    {
        var active = _suites.Values.Where(s => !s.Completion.IsCompleted).Select(s => s.Snapshot()).OrderBy(s => s.CreatedAt).ToList();
        return active.Count == 0 ? (0, 0, 0) : (active.Count, active[0].ScenariosDone, active[0].ScenariosTotal);
    }

    /// <summary>Keeps the suite at each change (a suite changes once per scenario).</summary>
    private void Record(SuiteRun suite) => archive.Write(suite.Snapshot());
}
