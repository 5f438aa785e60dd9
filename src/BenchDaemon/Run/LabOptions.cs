using System.CommandLine;
using System.CommandLine.Parsing;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using IpcBench.Daemon.Lab;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run --daemons` / `--daemons-file`: the options that make `run` a client of several daemons (a lab) rather than an
/// engine in process. Apart from RunOptions so that class gains three lines, not a second job. Every file is read and
/// checked while parsing, so a wrong path, an unreadable token or a duplicate address is a usage error (exit 2) before
/// any daemon is called.
/// </summary>
internal sealed class LabOptions
{
    public Option<string?> Daemons { get; } = RunOptions.Checked(new Option<string?>("--daemons")
    {
        Description = "Run the suite on these daemons and report them side by side: comma-separated host:port, http://host:port or https://host:port",
    }, value => LabDaemons.FromList("--daemons", value, tls: false));

    public Option<string?> DaemonsFile { get; } = RunOptions.Checked(new Option<string?>("--daemons-file")
    {
        Description = "As --daemons, from a YAML file naming each machine: machines: [{name: lab-01, address: \"https://10.0.0.5:5051\"}]",
    }, value => LabDaemons.FromFile("--daemons-file", value, tls: false));

    public Option<bool> OneAtATime { get; } = new("--one-at-a-time")
    {
        Description = "With --daemons: one daemon's suite after the other (machines that share a host, a NIC or a power budget); default all at once",
    };

    public Option<string?> CaFile { get; } = RunOptions.Checked(new Option<string?>("--ca-file")
    {
        Description = "With --daemons: PEM certificate(s) to trust for the daemons' TLS (self-signed or a lab CA); host:port addresses then use https",
    }, value => LoadCertificates(value));

    public Option<string?> TokenFile { get; } = RunOptions.Checked(new Option<string?>("--token-file")
    {
        Description = "With --daemons: file holding the daemons' bearer token (chmod 600; never on the command line)",
    }, value => ReadToken(value));

    public IEnumerable<Option> All => [Daemons, DaemonsFile, OneAtATime, CaFile, TokenFile];

    /// <summary>
    /// What no single option can check: one source of daemons, the client options only with one, and `run`'s options
    /// that a suite on a remote daemon cannot honour (<paramref name="localOnly"/>) refused rather than ignored.
    /// </summary>
    public void Validate(CommandResult result, IEnumerable<(Option Option, string Instead)> localOnly)
    {
        bool Given(Option option) => result.GetResult(option) is { Implicit: false };
        bool lab = Given(Daemons) || Given(DaemonsFile);
        if (Given(Daemons) && Given(DaemonsFile))
        {
            result.AddError("--daemons and --daemons-file: give one of them");
        }

        foreach (var option in new Option[] { OneAtATime, CaFile, TokenFile }.Where(o => !lab && Given(o)))
        {
            result.AddError($"{option.Name}: only with --daemons or --daemons-file");
        }

        foreach (var (option, instead) in localOnly.Where(o => lab && Given(o.Option)))
        {
            result.AddError($"{option.Name}: not with --daemons (a suite on a daemon has no such field); {instead}");
        }
    }

    /// <summary>The lab, or null for a local run.</summary>
    public LabSettings? Read(ParseResult result)
    {
        var certificates = LoadCertificates(result.GetValue(CaFile));
        bool tls = certificates is not null;
        var daemons = result.GetValue(Daemons) is { } list ? LabDaemons.FromList("--daemons", list, tls)
            : result.GetValue(DaemonsFile) is { } file ? LabDaemons.FromFile("--daemons-file", file, tls)
            : null;
        return daemons is null ? null : new LabSettings(daemons, result.GetValue(OneAtATime), certificates, ReadToken(result.GetValue(TokenFile)));
    }

    private static X509Certificate2Collection? LoadCertificates(string? path)
    {
        if (path is null)
        {
            return null;
        }

        var certificates = new X509Certificate2Collection();
        try
        {
            certificates.ImportFromPemFile(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or CryptographicException)
        {
            throw new ArgumentException($"--ca-file {path}: {e.Message}", e);
        }

        return certificates.Count > 0 ? certificates : throw new ArgumentException($"--ca-file {path}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
    }

    private static string? ReadToken(string? path)
    {
        try
        {
            return path is null ? null : Hosting.ControlToken.ReadFile(path);
        }
        catch (Hosting.ControlTokenException e)
        {
            throw new ArgumentException($"--token-file {path}: {e.Message}", e);
        }
    }
}
