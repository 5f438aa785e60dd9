using Grpc.Core;
using IpcBench.Daemon.Core;
using IpcBench.V1;

namespace IpcBench.Daemon.Agents;

/// <summary>ipcbench.v1.AgentLink, served only on the daemon's private Unix socket (DaemonHost confines it there).</summary>
public sealed class AgentLinkService(AgentDirectory directory) : AgentLink.AgentLinkBase
{
    public override async Task Attach(AttachRequest request, IServerStreamWriter<AgentCommand> responseStream, ServerCallContext context)
    {
        var session = Find(request.ScenarioId, request.AgentIndex, request.Token);
        var connection = session.Connection
            ?? throw new RequestRefusedException(RefusalKind.FailedPrecondition, field: null, $"agent {request.AgentIndex} of scenario '{request.ScenarioId}' has no process");
        // Only the agent's own connection ends the stream, never the daemon's shutdown: while stopping, the scenario still
        // has to send its stop and receive the agent's final report through it. A warm agent keeps this stream for
        // every scenario it serves.
        var agentGone = context.GetHttpContext().RequestAborted;
        await connection.AttachAsync(command => responseStream.WriteAsync(command, agentGone), agentGone).ConfigureAwait(false);
    }

    public override Task<ReportAck> Report(AgentReport request, ServerCallContext context)
    {
        Find(request.ScenarioId, request.AgentIndex, request.Token).OnReport(request);
        return Task.FromResult(new ReportAck());
    }

    private AgentSession Find(string scenarioId, int index, string token) =>
        directory.Find(scenarioId, index, token)
        ?? throw new RequestRefusedException(RefusalKind.PermissionDenied, field: null, $"no agent {index} of scenario '{scenarioId}' with that token");
}
