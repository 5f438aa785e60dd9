using System.Net;
using Microsoft.AspNetCore.Hosting;
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
    /// Listens for gRPC at <paramref name="address"/> (<c>http://127.0.0.1:50051</c>, <c>http://0.0.0.0:50051</c>,
    /// <c>http://localhost:50051</c>, <c>unix:/run/x.sock</c>). HTTP/2 only. Without a certificate this is h2c, and
    /// clients must use prior knowledge, which is what gRPC clients do; with one, TLS negotiates h2 by ALPN.
    /// </summary>
    public static void ListenGrpcLite(this KestrelServerOptions kestrel, string address, Action<GrpcLiteListenOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        var parsed = GrpcLiteAddress.Parse(address);
        var options = new GrpcLiteListenOptions();
        configure?.Invoke(options);
        if (options.Certificate is { HasPrivateKey: false })
        {
            throw new ArgumentException($"'{address}': the TLS certificate {options.Certificate.Subject} has no private key.", nameof(configure));
        }

        void Configure(ListenOptions listen)
        {
            listen.Protocols = HttpProtocols.Http2;
            if (options.Name is { } name)
            {
                // Connection features are visible to every request on the connection, so handlers can tell listeners
                // apart without trusting anything the client sends (the Host header, for instance, is the client's word).
                var feature = new GrpcLiteListenerFeature(name);
                listen.Use(next => connection =>
                {
                    connection.Features.Set<IGrpcLiteListenerFeature>(feature);
                    return next(connection);
                });
            }

            if (options.Certificate is { } certificate)
            {
                listen.UseHttps(certificate);
            }
        }

        if (parsed.UnixSocketPath is { } path)
        {
            kestrel.ListenUnixSocket(path, Configure);
            return;
        }

        var uri = parsed.HttpUri!;
        if (uri.Scheme != Uri.UriSchemeHttp)
        {
            throw new ArgumentException($"'{address}': give the address as http://host:port or host:port; TLS is chosen by {nameof(GrpcLiteListenOptions)}.{nameof(GrpcLiteListenOptions.Certificate)}, not by the scheme.", nameof(address));
        }

        var host = uri.DnsSafeHost;
        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            kestrel.ListenLocalhost(uri.Port, Configure);
        }
        else if (IPAddress.TryParse(host, out var ip))
        {
            kestrel.Listen(ip, uri.Port, Configure);
        }
        else
        {
            throw new ArgumentException($"'{address}': the host must be an IP address or localhost.", nameof(address));
        }
    }
}
