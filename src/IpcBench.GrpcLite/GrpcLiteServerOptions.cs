namespace IpcBench.GrpcLite;

public sealed class GrpcLiteServerOptions
{
    /// <summary>Largest request message accepted; bigger ones fail with RESOURCE_EXHAUSTED. gRPC's usual default is 4 MiB.</summary>
    public int MaxReceiveMessageSize { get; set; } = GrpcProtocol.DefaultMaxMessageSize;
}
