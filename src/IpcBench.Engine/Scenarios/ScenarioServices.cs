using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Core;

namespace IpcBench.Daemon.Scenarios;

/// <summary>What every scenario run shares with the others: the daemon's settings, its agents, its store and its log.</summary>
public sealed record ScenarioServices(
    DaemonOptions Options,
    RuntimeDirectory Runtime,
    AgentLauncher Launcher,
    AgentDirectory Agents,
    AgentPool Pool,
    IScenarioRecorder Recorder,
    ILogger Logger)
{
    /// <summary>The machine's probe history, for the placement classes the validity check uses.</summary>
    public IProbeHistory Probes { get; init; } = NoProbeHistory.Instance;
}
