using System.Globalization;
using System.Net;

namespace IpcBench.Contracts;

/// <summary>
/// An address as the daemon's options and the CLI take one: unix:/path, host:port, or http(s)://host:port (IPv6 in
/// brackets). One parser, so that the listener, the token rule, `health` and `run --daemons` agree on what an address
/// is; what each accepts of it stays its own (a listener may take port 0, a lab daemon needs its port written).
/// </summary>
public sealed class DaemonAddress
{
    private const string UnixPrefix = "unix:";

    private DaemonAddress(string? socketPath, Uri? uri, bool portGiven)
    {
        SocketPath = socketPath;
        Uri = uri;
        PortGiven = portGiven;
    }

    /// <summary>The unix socket's path (empty when none was written); null for a network address.</summary>
    public string? SocketPath { get; }

    /// <summary>A network address as a URI; null for a unix socket.</summary>
    public Uri? Uri { get; }

    /// <summary>The port was written out, not filled in by the scheme's default (80, 443).</summary>
    public bool PortGiven { get; }

    /// <summary>A gRPC endpoint over the network: http or https, a host, and nothing after the port.</summary>
    public bool IsHttpOrigin => Uri is { Scheme: "http" or "https", AbsolutePath: "/" } uri && uri.Host.Length > 0
        && uri.Query.Length == 0 && uri.Fragment.Length == 0 && uri.UserInfo.Length == 0;

    public bool IsLocalhost => Uri is { } uri && string.Equals(uri.DnsSafeHost, "localhost", StringComparison.OrdinalIgnoreCase);

    /// <summary>The host as an IP address; null for a host name or a unix socket.</summary>
    public IPAddress? Ip => Uri is { } uri && IPAddress.TryParse(uri.DnsSafeHost, out var ip) ? ip : null;

    /// <summary>
    /// Only this machine can reach it: loopback IPs, localhost and unix sockets (which file permissions protect). Any
    /// other host name counts as reachable from outside, since it may resolve to anything.
    /// </summary>
    public bool IsLocalOnly => SocketPath is not null || IsLocalhost
        || (Ip is { } ip && IPAddress.IsLoopback(ip.IsIPv4MappedToIPv6 ? ip.MapToIPv4() : ip));

    /// <summary>
    /// Where a client on this machine connects to reach a daemon listening here: the unspecified addresses (0.0.0.0,
    /// [::]) become loopback, which a check inside the daemon's container or pod reaches.
    /// </summary>
    public Uri? LocalTarget
    {
        get
        {
            if (Uri is not { } uri)
            {
                return null;
            }

            var target = new UriBuilder(uri);
            if (Ip is { } ip && (ip.Equals(IPAddress.Any) || ip.Equals(IPAddress.IPv6Any)))
            {
                target.Host = ip.Equals(IPAddress.Any) ? "127.0.0.1" : "[::1]";
            }

            return target.Uri;
        }
    }

    /// <param name="tls">A bare host:port means https (a client given a CA to trust); otherwise http.</param>
    /// <returns>Null when it is neither a unix socket nor an absolute URI.</returns>
    public static DaemonAddress? Parse(string address, bool tls = false)
    {
        if (address.StartsWith(UnixPrefix, StringComparison.OrdinalIgnoreCase))
        {
            var path = address[UnixPrefix.Length..];
            return new(path.StartsWith("//", StringComparison.Ordinal) ? path[2..] : path, null, portGiven: false);
        }

        var text = address.Contains("://", StringComparison.Ordinal) ? address : (tls ? "https://" : "http://") + address;
        return Uri.TryCreate(text, UriKind.Absolute, out var uri)
            ? new(null, uri, text.TrimEnd('/').EndsWith(":" + uri.Port.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal))
            : null;
    }
}
