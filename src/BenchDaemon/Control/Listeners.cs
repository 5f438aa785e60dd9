using System.Security.Cryptography.X509Certificates;
using Grpc.AspNetCore.Server;
using Grpc.Core;
using IpcBench.Contracts;
using IpcBench.Daemon.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace IpcBench.Daemon.Control;

/// <summary>
/// Which of the daemon's listeners a connection came in on. Set by Kestrel connection middleware, so it is the server's
/// own knowledge, never anything the client sends (the Host header, say); every request on the connection sees it.
/// </summary>
public sealed record ListenerFeature(string Name);

/// <summary>Endpoint metadata: serve this endpoint only to connections of that listener.</summary>
public sealed record ServedOnListenerMetadata(string Listener);

public static class Listeners
{
    /// <summary>
    /// Listens for gRPC at <paramref name="address"/> (<c>127.0.0.1:50051</c>, <c>http://0.0.0.0:50051</c>,
    /// <c>localhost:50051</c>, <c>unix:/run/x.sock</c>), HTTP/2 only, tagging its connections with <paramref name="name"/>.
    /// Without a certificate that is h2c (gRPC clients use prior knowledge); with one, TLS negotiates h2 by ALPN.
    /// </summary>
    public static void ListenGrpc(this KestrelServerOptions kestrel, string address, string name, X509Certificate2? certificate = null)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        void Configure(ListenOptions listen)
        {
            listen.Protocols = HttpProtocols.Http2;
            listen.TagConnections(name);
            if (certificate is not null)
            {
                listen.UseHttps(certificate);
            }
        }

        var parsed = DaemonAddress.Parse(address);
        if (parsed?.SocketPath is { } path)
        {
            kestrel.ListenUnixSocket(path.Length > 0 ? path : throw new ArgumentException($"'{address}' names no socket path; use unix:/path/to/socket."), Configure);
            return;
        }

        if (parsed?.Uri is not { } uri || uri.Scheme != Uri.UriSchemeHttp)
        {
            throw new ArgumentException($"'{address}' is not a gRPC address; use host:port, http://host:port or unix:/path/to/socket (TLS comes from IpcBench:TlsCertificateFile, not the scheme).");
        }

        if (parsed.IsLocalhost)
        {
            kestrel.ListenLocalhost(uri.Port, Configure);
        }
        else if (parsed.Ip is { } ip)
        {
            kestrel.Listen(ip, uri.Port, Configure);
        }
        else
        {
            throw new ArgumentException($"'{address}': the host must be an IP address or localhost.");
        }
    }

    /// <summary>Tags every connection of this listener with a <see cref="ListenerFeature"/> named <paramref name="name"/>.</summary>
    public static void TagConnections(this ListenOptions listen, string name)
    {
        ArgumentNullException.ThrowIfNull(listen);
        var feature = new ListenerFeature(name);
        listen.Use(next => connection =>
        {
            connection.Features.Set(feature);
            return next(connection);
        });
    }

    /// <summary>Whether the request came in on the listener <paramref name="name"/>.</summary>
    public static bool IsOnListener(this HttpContext context, string name) => context.Features.Get<ListenerFeature>()?.Name == name;

    /// <summary>Serves these endpoints only on the listener <paramref name="name"/>; elsewhere they answer UNIMPLEMENTED.</summary>
    public static TBuilder OnlyOnListener<TBuilder>(this TBuilder builder, string name)
        where TBuilder : IEndpointConventionBuilder =>
        builder.WithMetadata(new ServedOnListenerMetadata(name));

    /// <summary>
    /// Enforces <see cref="ServedOnListenerMetadata"/>, the one place listeners are told apart. A service confined to
    /// another listener answers as if it did not exist here, the way gRPC servers answer for unknown services.
    /// </summary>
    public static IApplicationBuilder UseListenerConfinement(this IApplicationBuilder app) =>
        app.Use(async (context, next) =>
        {
            var endpoint = context.GetEndpoint();
            if (endpoint?.Metadata.GetMetadata<ServedOnListenerMetadata>() is { } confined
                && !context.IsOnListener(confined.Listener))
            {
                var service = endpoint.Metadata.GetMetadata<GrpcMethodMetadata>()?.Method.ServiceName ?? endpoint.DisplayName;
                await GrpcResponses.WriteStatusAsync(context, StatusCode.Unimplemented, $"Service {service} is not served on this endpoint.").ConfigureAwait(false);
                return;
            }

            await next(context).ConfigureAwait(false);
        });
}
