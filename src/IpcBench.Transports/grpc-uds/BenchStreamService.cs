using Grpc.Core;
using IpcBench.Transports.GrpcUds.Wire;

namespace IpcBench.Transports.GrpcUds;

/// <summary>The gRPC service one publisher serves: both calls hand their streams to the publisher's subscriber list.</summary>
internal sealed class BenchStreamService(SubscriberStreams streams) : BenchStream.BenchStreamBase
{
    public override Task Subscribe(SubscribeRequest request, IServerStreamWriter<BenchMessage> responseStream, ServerCallContext context) =>
        streams.ServeAsync(request.SubscriberIndex, responseStream, echoes: null, context);

    public override Task Exchange(IAsyncStreamReader<BenchMessage> requestStream, IServerStreamWriter<BenchMessage> responseStream, ServerCallContext context)
    {
        // The subscriber's index travels in the call's metadata: the request stream carries only echoes.
        var index = context.RequestHeaders.GetValue(GrpcUdsTransport.SubscriberIndexHeader);
        return streams.ServeAsync(int.TryParse(index, out int i) ? i : -1, responseStream, requestStream, context);
    }
}
