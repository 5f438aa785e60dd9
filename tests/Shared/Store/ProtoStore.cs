using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Schema;
using IpcBench.V1;

namespace IpcBench.Tests.Shared;

/// <summary>
/// A <see cref="ScenarioStore"/> seen through the one mapping (<see cref="ScenarioProtos"/>): store tests state what they
/// write and expect in the proto view users get, so a store that kept records but lost a field on the way fails them.
/// </summary>
internal sealed class ProtoStore(ScenarioStore store)
{
    public ScenarioStore Inner => store;

    public void Initialize() => store.Initialize();

    public void Write(IEnumerable<ProtoWrite> writes, string owner) => store.Write([.. writes.Select(w => w.ToEngine())], owner);

    public Scenario? Get(string id) => store.Get(id) is { } s ? ScenarioProtos.ToProto(s) : null;

    public IReadOnlyList<Scenario> Query(ScenarioFilter filter, ScenarioKey? after, int limit) =>
        [.. store.Query(filter, after, limit).Select(ScenarioProtos.ToProto)];

    public IReadOnlyList<IntervalStats> Series(string id) => [.. store.Series(id).Select(ScenarioProtos.ToProto)];

    public IReadOnlyList<HdrInterval> LatencyIntervals(string id) => store.LatencyIntervals(id);

    public IReadOnlyList<SoakPoint> SoakPoints(string id) => store.SoakPoints(id);

    public IReadOnlyList<string> FailOrphans(Func<string, bool> ownerAlive, DateTime now) => store.FailOrphans(ownerAlive, now);

    public IReadOnlyList<string> Trim(int maxScenarios, DateTime? olderThan) => store.Trim(maxScenarios, olderThan);

    public long Count() => store.Count();

    public static ScenarioKey Key(Scenario scenario) => ScenarioKey.Of(ScenarioProtos.FromProto(scenario));

    public static bool Matches(ScenarioFilter filter, Scenario scenario) => filter.Matches(ScenarioProtos.FromProto(scenario));

    public static RunState State(ScenarioState state) => ScenarioProtos.FromProto(state);
}

/// <summary>A <see cref="StoreWrite"/> in the proto view.</summary>
internal sealed record ProtoWrite(string ScenarioId, Scenario? Scenario, IntervalStats? Point, HdrInterval? Latency = null)
{
    public SoakPoint? Soak { get; init; }

    public static implicit operator StoreWrite(ProtoWrite write) => write.ToEngine();

    public StoreWrite ToEngine() => new(
        ScenarioId, Scenario is { } s ? ScenarioProtos.FromProto(s) : null, Point is { } p ? ScenarioProtos.FromProto(p) : null, Latency) { Soak = Soak };
}
