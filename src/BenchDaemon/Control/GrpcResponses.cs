using System.Globalization;
using System.Text;
using Grpc.Core;

namespace IpcBench.Daemon.Control;

/// <summary>
/// A call refused before grpc-dotnet sees it (by authentication or listener confinement) still has to be a gRPC answer:
/// HTTP 200 with grpc-status in the headers ("trailers-only"), or clients report a protocol error instead of the status.
/// </summary>
internal static class GrpcResponses
{
    /// <summary>Longer status messages are cut: see <see cref="Limit"/>.</summary>
    public const int MaxStatusMessageLength = 2048;

    public static Task WriteStatusAsync(HttpContext context, StatusCode code, string message)
    {
        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "application/grpc";
        response.Headers["grpc-status"] = ((int)code).ToString(CultureInfo.InvariantCulture);
        response.Headers["grpc-message"] = PercentEncode(Limit(message));
        return response.CompleteAsync();
    }

    /// <summary>
    /// Messages often quote what the caller sent, and a header as large as the request would exceed clients' header
    /// limits (HttpClient's is 64 KiB), which they report as a broken connection, taking every other call on it down.
    /// </summary>
    public static string Limit(string message) =>
        message.Length <= MaxStatusMessageLength
            ? message
            : string.Concat(message.AsSpan(0, MaxStatusMessageLength), $"... ({message.Length - MaxStatusMessageLength} more characters)");

    /// <summary>grpc-message is UTF-8 with '%' and bytes outside 0x20-0x7E percent-encoded (the gRPC HTTP/2 spec).</summary>
    private static string PercentEncode(string message)
    {
        if (!message.Any(c => c is < ' ' or > '~' or '%'))
        {
            return message;
        }

        var builder = new StringBuilder();
        foreach (var b in Encoding.UTF8.GetBytes(message))
        {
            _ = b is >= 0x20 and <= 0x7E and not (byte)'%' ? builder.Append((char)b) : builder.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
        }

        return builder.ToString();
    }
}
