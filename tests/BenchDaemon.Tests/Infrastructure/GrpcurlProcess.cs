using IpcBench.Tests.Shared;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Runs the real grpcurl (../shared/tools/grpcurl), as users do.</summary>
internal static class GrpcurlProcess
{
    public static Task<GrpcurlRunner.Result> RunAsync(IEnumerable<string> arguments) => GrpcurlRunner.RunAsync(RepoLayout.Grpcurl, arguments);
}
