namespace IpcBench.GrpcLite;

/// <summary>
/// A call that ended with a non-OK gRPC status. Handlers throw it to choose the status a client sees;
/// the client throws it for every non-OK status it receives.
/// </summary>
public sealed class RpcException : Exception
{
    public RpcException(StatusCode statusCode, string detail)
        : this(statusCode, detail, innerException: null)
    {
    }

    public RpcException(StatusCode statusCode, string detail, Exception? innerException)
        : base($"Status(StatusCode=\"{statusCode}\", Detail=\"{detail}\")", innerException)
    {
        StatusCode = statusCode;
        Detail = detail;
    }

    public StatusCode StatusCode { get; }

    /// <summary>The human-readable status message (<c>grpc-message</c>), already percent-decoded.</summary>
    public string Detail { get; }
}
