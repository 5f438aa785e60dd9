using System.Globalization;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using Microsoft.Data.Sqlite;

namespace IpcBench.Daemon.Persistence;

/// <summary>One queued write: a scenario's snapshot, a point of its series, or both; or a latency interval; or a soak point.</summary>
public sealed record StoreWrite(string ScenarioId, ScenarioSnapshot? Scenario, IntervalSample? Point, HdrInterval? Latency = null)
{
    public SoakPoint? Soak { get; init; }
}

/// <summary>The ListScenarios/ExportScenarios filters, validated; null means "any".</summary>
public sealed record ScenarioFilter(string? Transport, RunState? State, DateTime? CreatedAfter, DateTime? CreatedBefore)
{
    public static readonly ScenarioFilter None = new(null, null, null, null);

    public bool Matches(ScenarioSnapshot scenario)
    {
        long created = ScenarioStore.ToMicros(scenario.CreatedAt);
        return (Transport is null || scenario.Spec?.Transport == Transport)
            && (State is null || scenario.State == State)
            && (CreatedAfter is null || created >= ScenarioStore.ToMicros(CreatedAfter.Value))
            && (CreatedBefore is null || created < ScenarioStore.ToMicros(CreatedBefore.Value))
            && (SuiteId is null || scenario.SuiteId == SuiteId);
    }

    /// <summary>Only the scenarios of this suite.</summary>
    public string? SuiteId { get; init; }
}

/// <summary>A scenario's place in "newest first": created_at (µs), then id, both descending.</summary>
public readonly record struct ScenarioKey(long CreatedAtMicros, string Id) : IComparable<ScenarioKey>
{
    public static ScenarioKey Of(ScenarioSnapshot scenario) => new(ScenarioStore.ToMicros(scenario.CreatedAt), scenario.Id);

    /// <summary>Negative when this key comes first in "newest first" order.</summary>
    public int CompareTo(ScenarioKey other)
    {
        int byTime = other.CreatedAtMicros.CompareTo(CreatedAtMicros);
        return byTime != 0 ? byTime : string.CompareOrdinal(other.Id, Id);
    }
}
