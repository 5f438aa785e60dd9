namespace IpcBench.Daemon.Core;

/// <summary>A scenario failed for a reason users can act on; its message is the scenario's error.</summary>
public sealed class ScenarioFailureException(string message) : Exception(message);
