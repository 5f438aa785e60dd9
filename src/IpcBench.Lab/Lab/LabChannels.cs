using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Grpc.Net.Client;

namespace IpcBench.Daemon.Lab;

/// <summary>
/// gRPC channels to a lab's daemons: h2c or TLS as each address says, the --ca-file roots trusted besides the system's,
/// and the bearer token in the authorization header of every call (what Hosting/BearerTokenAuthentication checks).
/// </summary>
internal static class LabChannels
{
    public static GrpcChannel Create(LabDaemon daemon, LabSettings lab)
    {
        var sockets = new SocketsHttpHandler
        {
            EnableMultipleHttp2Connections = true,
            // A machine that is off answers nothing; say so in seconds, not after the OS's minutes of SYN retries.
            ConnectTimeout = TimeSpan.FromSeconds(10),
        };
        if (lab.Trusted is { } trusted)
        {
            sockets.SslOptions.RemoteCertificateValidationCallback = (_, certificate, _, errors) => Trusts(certificate, errors, trusted);
        }

        HttpMessageHandler handler = lab.Token is { } token ? new BearerToken(token) { InnerHandler = sockets } : sockets;
        return GrpcChannel.ForAddress(daemon.Endpoint, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            ThrowOperationCanceledOnCancellation = true,
        });
    }

    /// <summary>The system's verdict, or else a chain that only lacked a trusted root and ends in one of --ca-file's; a wrong name is never forgiven.</summary>
    internal static bool Trusts(X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2Collection trusted)
    {
        if (errors == SslPolicyErrors.None)
        {
            return true;
        }

        if (certificate is null || errors != SslPolicyErrors.RemoteCertificateChainErrors)
        {
            return false;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.AddRange(trusted);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        using var server = new X509Certificate2(certificate);
        return chain.Build(server);
    }

    private sealed class BearerToken(string token) : DelegatingHandler
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            request.Headers.TryAddWithoutValidation("authorization", "Bearer " + token);
            return base.SendAsync(request, cancellationToken);
        }
    }
}
