namespace IpcBench.GrpcLite;

/// <summary>Sends the messages of a server stream. Each write is flushed, so the client sees it at once.</summary>
public interface IServerStreamWriter<in T>
{
    /// <summary>Writes one message. Only one write may be pending at a time, and none after the handler returns.</summary>
    Task WriteAsync(T message, CancellationToken cancellationToken = default);
}
