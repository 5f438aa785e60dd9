using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>A machine's core-to-core probes as scenarios take them, and the placement classes learned from them.</summary>
public interface IProbeHistory
{
    /// <summary>Keeps one probe of <paramref name="machine"/> (<see cref="MachineIdentity"/>).</summary>
    void Add(string machine, string cores, double roundTripNs, string scenarioId);

    /// <summary>The classes learned from the machine's latest <see cref="PlacementClasses.HistoryLimit"/> probes.</summary>
    PlacementClasses Classes(string machine);
}

/// <summary>A history that keeps nothing: where no database is wired in (tests that build a manager by hand).</summary>
public sealed class NoProbeHistory : IProbeHistory
{
    public static readonly NoProbeHistory Instance = new();

    public void Add(string machine, string cores, double roundTripNs, string scenarioId)
    {
    }

    public PlacementClasses Classes(string machine) => PlacementClasses.NotLearned;
}
