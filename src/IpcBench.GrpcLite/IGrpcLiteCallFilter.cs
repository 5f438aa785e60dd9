namespace IpcBench.GrpcLite;

/// <summary>
/// Runs before every call's handler, including calls to methods nobody registered, so a filter that refuses a call
/// also hides which methods exist. Throw <see cref="RpcException"/> to end the call with that status; headers set on
/// <c>context.HttpContext.Response</c> before throwing reach the client. Register with
/// <c>services.AddSingleton&lt;IGrpcLiteCallFilter, T&gt;()</c>; filters run in registration order.
/// </summary>
public interface IGrpcLiteCallFilter
{
    ValueTask OnCallAsync(GrpcCallContext context);
}
