using IpcBench.GrpcLite;
using IpcBench.V1;

namespace IpcBench.Daemon.Agents;

/// <summary>ipcbench.v1.AgentLink, served only on the daemon's private Unix socket.</summary>
public sealed class AgentLinkService(AgentDirectory directory)
{
    public async Task Attach(AttachRequest request, IServerStreamWriter<AgentCommand> writer, GrpcCallContext context)
    {
        var session = Find(context, request.ScenarioId, request.AgentIndex, request.Token);
        // Only the agent's own connection ends the stream: on daemon shutdown the scenario still has to send its stop
        // and receive the agent's final report through it (the call context's token also fires on shutdown).
        var agentGone = context.HttpContext.RequestAborted;
        await session.AttachAsync(command => writer.WriteAsync(command, agentGone), agentGone).ConfigureAwait(false);
    }

    public Task<ReportAck> Report(AgentReport report, GrpcCallContext context)
    {
        Find(context, report.ScenarioId, report.AgentIndex, report.Token).OnReport(report);
        return Task.FromResult(new ReportAck());
    }

    private AgentSession Find(GrpcCallContext context, string scenarioId, int index, string token)
    {
        // Agents reach the daemon over its private Unix socket (mode 0700 directory); never over the network port.
        if (context.HttpContext.Connection.LocalIpAddress is not null)
        {
            throw new RpcException(StatusCode.PermissionDenied, "AgentLink is served on the daemon's private Unix socket only");
        }

        return directory.Find(scenarioId, index, token)
            ?? throw new RpcException(StatusCode.PermissionDenied, $"no agent {index} of scenario '{scenarioId}' with that token");
    }
}
