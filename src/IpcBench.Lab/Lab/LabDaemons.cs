using IpcBench.Contracts;
using YamlDotNet.Core;
using YamlDotNet.Serialization;
using YamlDotNet.Serialization.NamingConventions;

namespace IpcBench.Daemon.Lab;

/// <summary>One daemon of a lab run: the name the report shows, the address as given, and where to call it.</summary>
internal sealed record LabDaemon(string Name, string Address, Uri Endpoint);

/// <summary>
/// The daemons of `run --daemons a,b` or `--daemons-file lab.yaml`, checked: every address a host and a port (with an
/// optional http:// or https://), no daemon twice (the same host and port, however written), no name twice.
/// </summary>
internal static class LabDaemons
{
    public const int MaxNameLength = 64;

    /// <summary>--daemons: each machine is named by its address.</summary>
    /// <param name="tls">--ca-file was given: a bare host:port is called over https.</param>
    public static IReadOnlyList<LabDaemon>? FromList(string option, string? value, bool tls)
    {
        if (value is null)
        {
            return null;
        }

        var addresses = value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        return Checked(option, [.. addresses.Select(a => new LabDaemon(a, a, Endpoint(option, a, tls)))]);
    }

    /// <summary>--daemons-file: <c>machines: [{name: lab-01, address: "https://10.0.0.5:5051"}]</c>; a machine without a name is named by its address.</summary>
    public static IReadOnlyList<LabDaemon>? FromFile(string option, string? path, bool tls)
    {
        if (path is null)
        {
            return null;
        }

        LabFile? file;
        try
        {
            file = new DeserializerBuilder().WithNamingConvention(UnderscoredNamingConvention.Instance).Build().Deserialize<LabFile>(File.ReadAllText(path));
        }
        catch (YamlException e)
        {
            // YamlDotNet's message for an unknown key names the .NET type; the user knows the file's keys.
            var why = e.InnerException?.Message ?? e.Message;
            throw new ArgumentException($"{option} {path}: line {e.Start.Line}, column {e.Start.Column}: " +
                (why.Contains("not found on type", StringComparison.Ordinal) ? "an unknown key; a lab file has machines: with name: and address: each" : why), e);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new ArgumentException($"{option} {path}: {e.Message}", e);
        }

        if (file?.Machines is not { Count: > 0 } machines)
        {
            throw new ArgumentException($"{option} {path}: lists no machines; e.g. machines: [{{name: lab-01, address: \"https://10.0.0.5:5051\"}}]");
        }

        var daemons = machines.Select((m, i) => m.Address is { Length: > 0 } address
            ? new LabDaemon(string.IsNullOrWhiteSpace(m.Name) ? address : m.Name.Trim(), address, Endpoint($"{option} {path}: machine {i + 1}", address, tls))
            : throw new ArgumentException($"{option} {path}: machine {i + 1}{(m.Name is null ? string.Empty : $" ({m.Name})")} has no address")).ToList();
        return Checked($"{option} {path}", daemons);
    }

    /// <summary>host:port, http://host:port or https://host:port (IPv6 in brackets), port 1-65535, nothing after it.</summary>
    public static Uri Endpoint(string option, string address, bool tls)
    {
        // A daemon has no default port worth guessing, so the 80 or 443 a URI fills in will not do.
        if (DaemonAddress.Parse(address, tls) is { IsHttpOrigin: true, PortGiven: true, Uri: { Port: > 0 and <= 65535 } uri })
        {
            return uri;
        }

        throw new ArgumentException($"{option}: '{address}' is not a daemon address; give host:port, http://host:port or https://host:port (port 1-65535)");
    }

    private static IReadOnlyList<LabDaemon> Checked(string option, IReadOnlyList<LabDaemon> daemons)
    {
        if (daemons.Count == 0)
        {
            throw new ArgumentException($"{option}: give at least one daemon address");
        }

        var twice = daemons.GroupBy(d => (Host: d.Endpoint.Host.ToLowerInvariant(), d.Endpoint.Port)).FirstOrDefault(g => g.Count() > 1);
        if (twice is not null)
        {
            throw new ArgumentException($"{option}: {string.Join(" and ", twice.Select(d => $"'{d.Address}'"))} are the same daemon; give each once");
        }

        var name = daemons.GroupBy(d => d.Name, StringComparer.Ordinal).FirstOrDefault(g => g.Count() > 1);
        if (name is not null)
        {
            throw new ArgumentException($"{option}: the name '{name.Key}' is given to {name.Count()} machines; each needs its own");
        }

        return daemons.FirstOrDefault(d => d.Name.Length > MaxNameLength) is { } longName
            ? throw new ArgumentException($"{option}: the name '{longName.Name[..20]}...' is longer than {MaxNameLength} characters")
            : daemons;
    }

    private sealed class LabFile
    {
        public List<LabFileMachine>? Machines { get; set; }
    }

    private sealed class LabFileMachine
    {
        public string? Name { get; set; }

        public string? Address { get; set; }
    }
}
