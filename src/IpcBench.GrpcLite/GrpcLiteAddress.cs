using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace IpcBench.GrpcLite;

/// <summary>
/// The address forms the server and client share: <c>http://host:port</c> (h2c), <c>host:port</c> (same),
/// and <c>unix:/path/to/socket</c> (also <c>unix:///path</c>).
/// </summary>
internal sealed record GrpcLiteAddress(Uri? HttpUri, string? UnixSocketPath)
{
    public static GrpcLiteAddress Parse(string address)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(address);
        if (address.StartsWith("unix:", StringComparison.OrdinalIgnoreCase))
        {
            var path = address["unix:".Length..];
            if (path.StartsWith("//", StringComparison.Ordinal))
            {
                path = path[2..];
            }

            return path.Length > 0
                ? new GrpcLiteAddress(null, path)
                : throw new ArgumentException($"'{address}' names no socket path; use unix:/path/to/socket.", nameof(address));
        }

        var withScheme = address.Contains("://", StringComparison.Ordinal) ? address : "http://" + address;
        if (!Uri.TryCreate(withScheme, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps))
        {
            throw new ArgumentException($"'{address}' is not a gRPC address; use http://host:port or unix:/path/to/socket.", nameof(address));
        }

        return new GrpcLiteAddress(uri, null);
    }
}

public static class GrpcLiteKestrelExtensions
{
    /// <summary>
    /// Listens for plain-text gRPC at <paramref name="address"/> (<c>http://127.0.0.1:50051</c>, <c>http://0.0.0.0:50051</c>,
    /// <c>http://localhost:50051</c>, <c>unix:/run/x.sock</c>). HTTP/2 only: without TLS there is no ALPN, so clients
    /// must use prior knowledge, which is what gRPC clients do.
    /// </summary>
    public static void ListenGrpcLite(this KestrelServerOptions kestrel, string address)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        var parsed = GrpcLiteAddress.Parse(address);
        static void Http2(ListenOptions listen) => listen.Protocols = HttpProtocols.Http2;

        if (parsed.UnixSocketPath is { } path)
        {
            kestrel.ListenUnixSocket(path, Http2);
            return;
        }

        var uri = parsed.HttpUri!;
        if (uri.Scheme != Uri.UriSchemeHttp)
        {
            throw new ArgumentException($"'{address}': only plain-text http:// is supported here; configure TLS endpoints on Kestrel directly.", nameof(address));
        }

        var host = uri.DnsSafeHost;
        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            kestrel.ListenLocalhost(uri.Port, Http2);
        }
        else if (IPAddress.TryParse(host, out var ip))
        {
            kestrel.Listen(ip, uri.Port, Http2);
        }
        else
        {
            throw new ArgumentException($"'{address}': the host must be an IP address or localhost.", nameof(address));
        }
    }
}
