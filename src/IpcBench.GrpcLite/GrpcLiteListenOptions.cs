using System.Security.Cryptography.X509Certificates;

namespace IpcBench.GrpcLite;

/// <summary>How one listener of <see cref="GrpcLiteKestrelExtensions.ListenGrpcLite"/> serves.</summary>
public sealed class GrpcLiteListenOptions
{
    /// <summary>
    /// A name for the listener, which services can be confined to (<see cref="GrpcLiteServiceBuilder.OnlyOnListeners"/>)
    /// and call filters can be scoped by. Null: an unnamed listener, which serves only unconfined services.
    /// </summary>
    public string? Name { get; set; }

    /// <summary>Serve TLS with this certificate (which must carry its private key); null: plain-text h2c.</summary>
    public X509Certificate2? Certificate { get; set; }
}

/// <summary>Set on every connection of a named listener.</summary>
public interface IGrpcLiteListenerFeature
{
    string Name { get; }
}

internal sealed record GrpcLiteListenerFeature(string Name) : IGrpcLiteListenerFeature;
