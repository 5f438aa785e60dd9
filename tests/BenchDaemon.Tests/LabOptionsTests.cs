using IpcBench.Daemon.Tests.Infrastructure;
using System.CommandLine;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using IpcBench.Daemon.Cli;
using IpcBench.Daemon.Run;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// `run --daemons` / `--daemons-file` and their client options, parsed in process: every problem is a usage error that
/// names the option (and the file and machine) and what it takes, before any daemon is called.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class LabOptionsTests : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "lab-options-" + Guid.NewGuid().ToString("N")[..10]);

    public LabOptionsTests() => Directory.CreateDirectory(_directory);

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Theory]
    [InlineData("127.0.0.1", "--daemons: '127.0.0.1' is not a daemon address; give host:port, http://host:port or https://host:port (port 1-65535)")]
    [InlineData("127.0.0.1:0", "--daemons: '127.0.0.1:0' is not a daemon address")]
    [InlineData("lab-01:99999", "--daemons: 'lab-01:99999' is not a daemon address")]
    [InlineData("ftp://lab-01:21", "--daemons: 'ftp://lab-01:21' is not a daemon address")]
    [InlineData("http://lab-01:5051/grpc", "--daemons: 'http://lab-01:5051/grpc' is not a daemon address")]
    [InlineData("https://lab-01", "--daemons: 'https://lab-01' is not a daemon address")]
    [InlineData("lab-01:5051,LAB-01:5051", "--daemons: 'lab-01:5051' and 'LAB-01:5051' are the same daemon; give each once")]
    [InlineData("127.0.0.1:5051,http://127.0.0.1:5051", "--daemons: '127.0.0.1:5051' and 'http://127.0.0.1:5051' are the same daemon; give each once")]
    [InlineData(",", "--daemons: give at least one daemon address")]
    public void ABadOrDuplicateAddress_IsAUsageError_NamingIt(string daemons, string expected)
    {
        var error = Assert.Single(Errors("run", "--daemons", daemons));
        Assert.StartsWith(expected, error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--token-file", "--token-file: only with --daemons or --daemons-file")]
    [InlineData("--ca-file", "--ca-file: only with --daemons or --daemons-file")]
    public void ClientOptions_WithoutDaemons_AreUsageErrors(string option, string expected)
    {
        var token = WriteToken("secret-token-0123456789");
        string[] args = option == "--token-file" ? ["run", option, token] : ["run", option, WriteCertificate()];

        Assert.Equal([expected], Errors(args));
        Assert.Equal(["--one-at-a-time: only with --daemons or --daemons-file"], Errors("run", "--one-at-a-time"));
    }

    [Fact]
    public void OptionsALabCannotHonour_AndBothSourcesOfDaemons_AreUsageErrors()
    {
        var lab = WriteFile("lab.yaml", "machines: [{name: lab-01, address: \"127.0.0.1:5051\"}]");

        Assert.Equal(["--daemons and --daemons-file: give one of them"], Errors("run", "--daemons", "127.0.0.1:5051", "--daemons-file", lab));
        var baseline = Assert.Single(Errors("run", "--daemons", "127.0.0.1:5051", "--baseline", Path.Combine(_directory, "old.json")));
        Assert.StartsWith("--baseline: not with --daemons", baseline, StringComparison.Ordinal);
        Assert.StartsWith("--latency-sample-every: not with --daemons", Assert.Single(Errors("run", "--daemons", "127.0.0.1:5051", "--latency-sample-every", "4")),
            StringComparison.Ordinal);
        var fresh = Assert.Single(Errors("run", "--daemons", "127.0.0.1:5051", "--fresh-agents"));
        Assert.StartsWith("--fresh-agents: not with --daemons", fresh, StringComparison.Ordinal);
        Assert.Contains("--IpcBench:WarmAgentIdleSeconds=0", fresh, StringComparison.Ordinal);
    }

    [Fact]
    public void ATokenFile_ThatIsMissing_ReadableByOthers_OrEmpty_IsAUsageError()
    {
        var missing = Path.Combine(_directory, "nope");
        var open = WriteToken("secret-token-0123456789", UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.OtherRead);
        var empty = WriteToken("  \n");
        var blanks = WriteToken("two words");

        Assert.Equal([$"--token-file {missing}: does not exist"], Errors("run", "--daemons", "127.0.0.1:5051", "--token-file", missing));
        Assert.Equal([$"--token-file {open}: is accessible by group or others (mode 644); chmod 600 it"], Errors("run", "--daemons", "127.0.0.1:5051", "--token-file", open));
        Assert.StartsWith($"--token-file {empty}: must hold one token", Assert.Single(Errors("run", "--daemons", "127.0.0.1:5051", "--token-file", empty)), StringComparison.Ordinal);
        Assert.StartsWith($"--token-file {blanks}: must hold one token", Assert.Single(Errors("run", "--daemons", "127.0.0.1:5051", "--token-file", blanks)), StringComparison.Ordinal);
    }

    /// <summary>The daemon's own rules for its token: one no daemon would hold is refused before any daemon is called.</summary>
    [Fact]
    public void ATokenFile_ShorterThanADaemonWouldHold_OrWithBlanks_IsAUsageError()
    {
        var shortToken = WriteToken("0123456789abcde\n");
        var blanks = WriteToken("a long enough token, with blanks");

        Assert.Equal([$"--token-file {shortToken}: must hold one token of printable ASCII without blanks; it has 15 characters: use at least 16 (e.g. openssl rand -hex 32)"],
            Errors("run", "--daemons", "127.0.0.1:5051", "--token-file", shortToken));
        Assert.Equal([$"--token-file {blanks}: must hold one token of printable ASCII without blanks; it has other characters (e.g. openssl rand -hex 32 makes one)"],
            Errors("run", "--daemons", "127.0.0.1:5051", "--token-file", blanks));
    }

    [Fact]
    public void ACaFile_WithoutACertificate_IsAUsageError()
    {
        var notPem = WriteFile("ca.pem", "not a certificate");

        Assert.Equal([$"--ca-file {notPem}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)"], Errors("run", "--daemons", "127.0.0.1:5051", "--ca-file", notPem));
        Assert.StartsWith($"--ca-file {Path.Combine(_directory, "none.pem")}: ", Assert.Single(Errors("run", "--daemons", "127.0.0.1:5051", "--ca-file", Path.Combine(_directory, "none.pem"))),
            StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("machines: []", "lists no machines")]
    [InlineData("hosts: [a]", "line 1, column 1: an unknown key; a lab file has machines: with name: and address: each")]
    [InlineData("machines:\n  - name: lab-01\n    adress: 127.0.0.1:5051", "line 3, column 5: an unknown key")]
    [InlineData("machines:\n  - name: lab-01", "machine 1 (lab-01) has no address")]
    [InlineData("machines:\n  - {name: lab-01, address: 127.0.0.1:5051}\n  - {name: lab-01, address: 127.0.0.1:5052}", "the name 'lab-01' is given to 2 machines; each needs its own")]
    [InlineData("machines:\n  - {name: lab-01, address: 127.0.0.1:5051}\n  - {name: lab-02, address: 127.0.0.1}", "machine 2: '127.0.0.1' is not a daemon address")]
    [InlineData("machines: [{name: lab-01", "line 2, column 1: While parsing a flow mapping")]
    public void ABadDaemonsFile_IsAUsageError_NamingTheFileAndTheMachine(string yaml, string expected)
    {
        var file = WriteFile("lab.yaml", yaml);

        var error = Assert.Single(Errors("run", "--daemons-file", file));
        Assert.StartsWith($"--daemons-file {file}", error, StringComparison.Ordinal);
        Assert.Contains(expected, error, StringComparison.Ordinal);
        var missing = Path.Combine(_directory, "missing.yaml");
        Assert.StartsWith($"--daemons-file {missing}: ", Assert.Single(Errors("run", "--daemons-file", missing)), StringComparison.Ordinal);
    }

    [Fact]
    public void ADaemonsFile_NamesEachMachine_AndACaFileMakesBareAddressesHttps()
    {
        var file = WriteFile("lab.yaml", "machines:\n  - name: lab-01\n    address: \"10.0.0.5:5051\"\n  - address: http://[::1]:5052\n  - {name: lab-03, address: \"https://lab-03.example:5051\"}\n");
        var token = WriteToken("  secret-token-0123456789\n");
        var options = new LabOptions();
        var command = new RootCommand();
        foreach (var option in options.All)
        {
            command.Options.Add(option);
        }

        var parsed = command.Parse(["--daemons-file", file, "--ca-file", WriteCertificate(), "--token-file", token, "--one-at-a-time"]);
        Assert.Empty(parsed.Errors);
        var lab = options.Read(parsed)!;

        Assert.Equal(["lab-01", "http://[::1]:5052", "lab-03"], lab.Daemons.Select(d => d.Name));
        Assert.Equal(["https://10.0.0.5:5051/", "http://[::1]:5052/", "https://lab-03.example:5051/"], lab.Daemons.Select(d => d.Endpoint.ToString()));
        Assert.Equal("secret-token-0123456789", lab.Token);
        Assert.True(lab.OneAtATime);
        Assert.Single(lab.Trusted!);
        Assert.Null(options.Read(command.Parse([])));
        Assert.Equal("http://127.0.0.1:5051/", options.Read(command.Parse(["--daemons", "127.0.0.1:5051"]))!.Daemons.Single().Endpoint.ToString());
    }

    [Fact]
    public void AValidLabCommandLine_HasNoErrors()
    {
        var token = WriteToken("secret-token-0123456789");

        Assert.Empty(Errors("run", "--daemons", "127.0.0.1:5051, lab-02:5051 ,https://[::1]:5053", "--token-file", token, "--ca-file", WriteCertificate(),
            "--one-at-a-time", "--transports", "uds", "--payloads", "8", "--repetitions", "3", "--rate", "2000"));
    }

    [Fact]
    public void AutoRepetitions_AndOfferedLoad_ReachEveryDaemon()
    {
        static V1.SuiteSpec Spec(params string[] args)
        {
            var options = new RunOptions();
            var command = new RootCommand();
            foreach (var option in options.All)
            {
                command.Options.Add(option);
            }

            var parsed = command.Parse(args);
            Assert.Empty(parsed.Errors);
            return RunSuiteSpec.From(options.Read(parsed), RunSuiteSpec.Lab);
        }

        var spec = Spec("--repetitions", "auto", "--precision", "2", "--max-repetitions", "12");
        Assert.Equal((0, true, 2.0, 12), (spec.Repetitions, spec.HasTargetPrecisionPercent, spec.TargetPrecisionPercent, spec.MaxRepetitions));
        Assert.False(Spec("--repetitions", "3").HasTargetPrecisionPercent);
        // The offered-load options reach the daemons too: a sweep as rates_per_publisher, a search as rate_search.
        Assert.Equal([1000.0, 10000.0], Spec("--rates", "1000,10000").RatesPerPublisher);
        Assert.Equal(TimeSpan.FromMilliseconds(1), Spec("--find-max-rate", "--max-p99", "1ms").RateSearch.MaxP99Latency.ToTimeSpan());
    }

    private static IReadOnlyList<string> Errors(params string[] args) => DaemonCommandLine.Parse(args).Errors;

    private string WriteFile(string name, string content)
    {
        var path = Path.Combine(_directory, name);
        File.WriteAllText(path, content);
        return path;
    }

    private string WriteToken(string token, UnixFileMode mode = UnixFileMode.UserRead | UnixFileMode.UserWrite)
    {
        var path = Path.Combine(_directory, "token-" + Guid.NewGuid().ToString("N")[..6]);
        File.WriteAllText(path, token);
        File.SetUnixFileMode(path, mode);
        return path;
    }

    private string WriteCertificate()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=lab-ca", key, HashAlgorithmName.SHA256);
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
        return WriteFile("ca-" + Guid.NewGuid().ToString("N")[..6] + ".pem", certificate.ExportCertificatePem());
    }
}
