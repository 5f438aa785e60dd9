using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace IpcBench.GrpcLite.Tests;

/// <summary>Self-signed server certificates made on the spot, so no test depends on a key checked into the repository.</summary>
internal static class TestCertificates
{
    /// <summary>A certificate for localhost and 127.0.0.1, valid for a day, with its private key.</summary>
    public static X509Certificate2 SelfSigned(string commonName = "localhost")
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={commonName}", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, 0, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        var now = DateTimeOffset.UtcNow;
        return request.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(1));
    }

    /// <summary>The certificate in PEM, as grpcurl's -cacert takes it.</summary>
    public static string WritePem(X509Certificate2 certificate, string directory)
    {
        var path = Path.Combine(directory, "cert.pem");
        File.WriteAllText(path, certificate.ExportCertificatePem());
        return path;
    }
}
