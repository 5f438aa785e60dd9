using System.Collections.Concurrent;

namespace IpcBench.Daemon.Agents;

/// <summary>Finds the session an agent's call belongs to, by scenario id and agent index.</summary>
public sealed class AgentDirectory
{
    private readonly ConcurrentDictionary<(string ScenarioId, int Index), AgentSession> _sessions = new();

    public void Add(AgentSession session) => _sessions[(session.ScenarioId, session.Index)] = session;

    public void Remove(AgentSession session) => _sessions.TryRemove(KeyValuePair.Create((session.ScenarioId, session.Index), session));

    public AgentSession? Find(string scenarioId, int index, string token) =>
        _sessions.TryGetValue((scenarioId, index), out var session) && session.Authenticates(token) ? session : null;
}
