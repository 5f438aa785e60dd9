using IpcBench.GrpcLite;
using IpcBench.V1;

namespace IpcBench.Daemon.Agents;

/// <summary>ipcbench.v1.AgentLink, served only on the daemon's private Unix socket.</summary>
public sealed class AgentLinkService(AgentDirectory directory)
{
    public async Task Attach(AttachRequest request, IServerStreamWriter<AgentCommand> writer, GrpcCallContext context)
    {
        var session = Find(context, request.ScenarioId, request.AgentIndex, request.Token);
        await session.AttachAsync(command => writer.WriteAsync(command, context.CancellationToken), context.CancellationToken).ConfigureAwait(false);
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
