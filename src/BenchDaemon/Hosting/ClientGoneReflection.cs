using Grpc.Core;
using Grpc.Reflection;

namespace IpcBench.Daemon.Hosting;

// grpcurl keeps its reflection stream open for the whole call; killed mid-call, the reflection service's next read
// throws InvalidOperationException ("Can't read messages after the request is complete") rather than a cancellation,
// (HttpContextStreamReader throws it once RequestAborted is cancelled; grpc-dotnet's own tests list it among the
// expected cancellation errors), and the gRPC host logs it as an error. A client that went away is not the daemon's error: seen in CI (2026-11-27)
// failing WatchScenarioTests, which kills grpcurl watchers mid-stream and allows no error lines.

/// <summary>Server reflection (v1) that ends quietly when its client has gone away.</summary>
internal sealed class ClientGoneReflectionV1(params Google.Protobuf.Reflection.ServiceDescriptor[] described) : ReflectionV1ServiceImpl(described)
{
    public override Task ServerReflectionInfo(IAsyncStreamReader<Grpc.Reflection.V1.ServerReflectionRequest> requestStream,
        IServerStreamWriter<Grpc.Reflection.V1.ServerReflectionResponse> responseStream, ServerCallContext context) =>
        ClientGone.Quietly(base.ServerReflectionInfo(requestStream, responseStream, context), context);
}

/// <summary>Server reflection (v1alpha, what older clients ask for) that ends quietly when its client has gone away.</summary>
internal sealed class ClientGoneReflectionV1Alpha(params Google.Protobuf.Reflection.ServiceDescriptor[] described) : ReflectionServiceImpl(described)
{
    public override Task ServerReflectionInfo(IAsyncStreamReader<Grpc.Reflection.V1Alpha.ServerReflectionRequest> requestStream,
        IServerStreamWriter<Grpc.Reflection.V1Alpha.ServerReflectionResponse> responseStream, ServerCallContext context) =>
        ClientGone.Quietly(base.ServerReflectionInfo(requestStream, responseStream, context), context);
}

internal static class ClientGone
{
    /// <summary>Awaits a streaming call, ending quietly on the reader's error for a request its client aborted.</summary>
    public static async Task Quietly(Task call, ServerCallContext context)
    {
        try
        {
            await call.ConfigureAwait(false);
        }
        catch (InvalidOperationException) when (context.CancellationToken.IsCancellationRequested)
        {
        }
    }
}
