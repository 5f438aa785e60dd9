using System.Diagnostics;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using Grpc.Health.V1;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Exposing the daemon: the bearer token on the control port (required off loopback or when asked for), TLS, and the
/// start-up refusals that name the option to fix. Each test starts its own daemon with the settings under test; the
/// refusals are started together (<see cref="SecurityRefusals"/>).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ControlPlaneSecurityTests(SecurityRefusals refusals, ITestOutputHelper output) : IDisposable, IClassFixture<SecurityRefusals>
{
    private const string TokenVariable = "IPCBENCH_CONTROL_TOKEN";

    /// <summary>Where docs/control-plane.md's grpcurl reads the token from (-expand-headers), so it is never in argv.</summary>
    private const string ClientTokenVariable = "IPCBENCH_TOKEN";
    private const string ListTransports = "/ipcbench.v1.BenchControl/ListTransports";
    internal static readonly string Token = Convert.ToHexString(RandomNumberGenerator.GetBytes(24));

    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-security-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task NonLoopbackAddress_WithoutAToken_RefusesToStart_NamingTheOptions()
    {
        var (exitCode, text) = await refusals.Daemons.ResultAsync(SecurityRefusals.NonLoopbackWithoutToken);

        Assert.Equal(2, exitCode);
        Assert.Contains("IpcBench:ControlAddress '0.0.0.0:", text, StringComparison.Ordinal);
        Assert.Contains("IpcBench:ControlTokenFile", text, StringComparison.Ordinal);
        Assert.Contains(TokenVariable, text, StringComparison.Ordinal);
    }

    public static TheoryData<string, string[], string> Refusals => new()
    {
        { "token required on loopback, none given", ["--IpcBench:RequireControlToken=true"], "IpcBench:RequireControlToken is set but there is no token" },
        { "token file missing", ["--IpcBench:RequireControlToken=true", "--IpcBench:ControlTokenFile={dir}/missing"], "does not exist" },
        { "token file readable by others", ["--IpcBench:RequireControlToken=true", "--IpcBench:ControlTokenFile={dir}/token-644"], "chmod 600" },
        { "token too short", ["--IpcBench:RequireControlToken=true", "--IpcBench:ControlTokenFile={dir}/short-token"], "use at least 16" },
        { "certificate without key", ["--IpcBench:TlsCertificateFile={dir}/cert.pem"], "IpcBench:TlsCertificateFile and IpcBench:TlsKeyFile go together" },
        { "certificate file missing", ["--IpcBench:TlsCertificateFile={dir}/missing.pem", "--IpcBench:TlsKeyFile={dir}/key.pem"], "IpcBench:TlsCertificateFile '{dir}/missing.pem' does not exist" },
        { "certificate file not PEM", ["--IpcBench:TlsCertificateFile={dir}/short-token", "--IpcBench:TlsKeyFile={dir}/key.pem"], "do not hold a PEM certificate" },
        { "key of another certificate", ["--IpcBench:TlsCertificateFile={dir}/cert.pem", "--IpcBench:TlsKeyFile={dir}/other-key.pem"], "IpcBench:TlsKeyFile" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task BadSecuritySettings_RefuseToStart_NamingTheProblem(string @case, string[] configuration, string expected)
    {
        // Started by the fixture with this case's configuration, {dir} its directory.
        var (exitCode, text) = await refusals.Daemons.ResultAsync(@case);

        output.WriteLine($"{@case} ({string.Join(' ', configuration)}):\n{text}");
        Assert.Equal(2, exitCode);
        Assert.Contains(expected.Replace("{dir}", refusals.Directory, StringComparison.Ordinal), text, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", text, StringComparison.Ordinal);
    }

    /// <summary>The container's case: every interface, a token file; only health answers without the token.</summary>
    [Fact]
    public async Task NonLoopbackAddress_WithATokenFile_ServesOnlyCallsCarryingIt()
    {
        var tokenFile = WriteSecret(_directory, "token", Token + "\n");
        await using var daemon = await DaemonProcess.StartAsync(new DaemonSettings
        {
            ListenHost = "0.0.0.0",
            Configuration = [$"--IpcBench:ControlTokenFile={tokenFile}"],
            Token = Token,
        });
        using var log = daemon.LogTo(output);

        Assert.NotEmpty(await daemon.ListTransportsAsync());
        foreach (var authorization in new string?[] { null, "Bearer " + Token[..^1], "Bearer " + Token + "0", "Basic " + Token })
        {
            using var channel = GrpcClients.Create("http://" + daemon.Address, authorization);
            var refused = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(ListTransports, new ListTransportsRequest(), ListTransportsResponse.Parser));
            Assert.Equal(StatusCode.Unauthenticated, refused.StatusCode);
            Assert.Contains("authorization: Bearer <token>", refused.Status.Detail, StringComparison.Ordinal);
            Assert.DoesNotContain(Token[..8], refused.Status.Detail, StringComparison.Ordinal);

            var health = await new Health.HealthClient(channel).CheckAsync(new HealthCheckRequest());
            Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, health.Status);
        }

        // Every BenchControl method, not just one: the filter sits in front of all of them.
        using var anonymous = GrpcClients.Create("http://" + daemon.Address);
        foreach (var method in new[] { "StartScenario", "GetScenario", "ListScenarios", "StopScenario" })
        {
            var refused = await Assert.ThrowsAsync<RpcException>(() =>
                anonymous.UnaryAsync($"/ipcbench.v1.BenchControl/{method}", new ListTransportsRequest(), ListTransportsResponse.Parser));
            Assert.Equal(StatusCode.Unauthenticated, refused.StatusCode);
        }

        var watch = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var unused in anonymous.ServerStreamingAsync("/ipcbench.v1.BenchControl/WatchScenario", new WatchScenarioRequest { Id = "x" }, Scenario.Parser))
            {
            }
        });
        Assert.Equal(StatusCode.Unauthenticated, watch.StatusCode);
        Assert.Contains(daemon.Output.Lines(0), l => l.Contains("Refused /ipcbench.v1.BenchControl/ListTransports", StringComparison.Ordinal));
    }

    /// <summary>
    /// docs/control-plane.md's "Exposing the daemon" with the real grpcurl: TLS with -cacert, the token from the environment
    /// through -expand-headers (a literal header would fail, so the expansion is what passes), health without.
    /// </summary>
    [GrpcurlFact]
    public async Task TlsAndToken_WithGrpcurl_AsTheReadmeShowsIt()
    {
        var (certificate, key) = WriteTlsFiles(_directory);
        using var trusted = X509Certificate2.CreateFromPem(File.ReadAllText(certificate));
        await using var daemon = await DaemonProcess.StartAsync(new DaemonSettings
        {
            // Loopback, so the token is only required because RequireControlToken says so.
            Configuration = ["--IpcBench:RequireControlToken=true", $"--IpcBench:TlsCertificateFile={certificate}", $"--IpcBench:TlsKeyFile={key}"],
            Environment = new Dictionary<string, string?> { [TokenVariable] = Token },
            Token = Token,
            TrustedCertificate = trusted,
        });
        using var log = daemon.LogTo(output);
        string[] tls = ["-cacert", certificate];
        string[] bearer = ["-expand-headers", "-H", $"authorization: Bearer ${{{ClientTokenVariable}}}"];

        var list = await GrpcurlAsync([.. tls, .. bearer, daemon.Address, "list"]);
        Assert.True(list.ExitCode == 0, list.Stderr);
        var services = list.Stdout.Split('\n', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains("ipcbench.v1.BenchControl", services);
        Assert.DoesNotContain("ipcbench.v1.AgentLink", services);

        var transports = await GrpcurlAsync([.. tls, .. bearer, daemon.Address, "ipcbench.v1.BenchControl/ListTransports"]);
        Assert.True(transports.ExitCode == 0, transports.Stderr);
        Assert.Contains("\"id\": \"uds\"", transports.Stdout, StringComparison.Ordinal);

        var noToken = await GrpcurlAsync([.. tls, daemon.Address, "ipcbench.v1.BenchControl/ListTransports"]);
        Assert.NotEqual(0, noToken.ExitCode);
        Assert.Contains("Unauthenticated", noToken.Stderr, StringComparison.Ordinal);

        var wrongToken = await GrpcurlAsync([.. tls, "-H", "authorization: Bearer not-the-token-at-all", daemon.Address, "list"]);
        Assert.NotEqual(0, wrongToken.ExitCode);
        Assert.Contains("Unauthenticated", wrongToken.Stderr, StringComparison.Ordinal);

        // Health needs no token; reflection does, so grpcurl reads the health schema from the .proto file instead.
        var health = await GrpcurlAsync([.. tls, "-import-path", Path.Combine(RepoLayout.Root, "protos"), "-proto", "grpc/health/v1/health.proto",
            daemon.Address, "grpc.health.v1.Health/Check"]);
        Assert.True(health.ExitCode == 0, health.Stderr);
        Assert.Contains("SERVING", health.Stdout, StringComparison.Ordinal);

        var plaintext = await GrpcurlAsync(["-plaintext", .. bearer, daemon.Address, "list"]);
        Assert.NotEqual(0, plaintext.ExitCode);

        // Our own client, through DaemonProcess: https with the certificate trusted and the token sent.
        Assert.Contains(await daemon.ListTransportsAsync(), t => t.Id == "uds");
    }

    internal static (string Certificate, string Key) WriteTlsFiles(string directory)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, 0, critical: true));
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
        var certificatePath = Path.Combine(directory, "cert.pem");
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        return (certificatePath, WriteSecret(directory, "key.pem", key.ExportPkcs8PrivateKeyPem()));
    }

    internal static string WriteSecret(string directory, string name, string content, UnixFileMode mode = UnixFileMode.UserRead | UnixFileMode.UserWrite)
    {
        var path = Path.Combine(directory, name);
        File.WriteAllText(path, content);
        File.SetUnixFileMode(path, mode);
        return path;
    }

    private async Task<(int ExitCode, string Stdout, string Stderr)> GrpcurlAsync(string[] arguments)
    {
        var result = await GrpcurlRunner.RunAsync(arguments, new Dictionary<string, string> { [ClientTokenVariable] = Token });
        output.WriteLine($"$ {result.CommandLine.Replace(Token, "<token>", StringComparison.Ordinal)}\n{result.Stdout}{result.Stderr}");
        return (result.ExitCode, result.Stdout, result.Stderr);
    }
}

/// <summary>
/// The files the refusal cases name (a certificate and its key, a key of another one, a token readable by others, a
/// short one) and one daemon per refusal case of <see cref="ControlPlaneSecurityTests"/>, started together.
/// </summary>
public sealed class SecurityRefusals : IAsyncLifetime
{
    public const string NonLoopbackWithoutToken = "non-loopback address without a token";

    public SecurityRefusals()
    {
        Daemons = new RefusingDaemons(() =>
        {
            ControlPlaneSecurityTests.WriteTlsFiles(Directory);
            ControlPlaneSecurityTests.WriteSecret(Directory, "token-644", ControlPlaneSecurityTests.Token,
                UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.OtherRead);
            ControlPlaneSecurityTests.WriteSecret(Directory, "short-token", "abc");
            using (var other = ECDsa.Create(ECCurve.NamedCurves.nistP256))
            {
                ControlPlaneSecurityTests.WriteSecret(Directory, "other-key.pem", other.ExportPkcs8PrivateKeyPem());
            }

            var cases = new Dictionary<string, DaemonSettings> { [NonLoopbackWithoutToken] = new() { ListenHost = "0.0.0.0" } };
            foreach (var row in ControlPlaneSecurityTests.Refusals)
            {
                var configuration = (string[])row[1];
                cases.Add((string)row[0], new() { Configuration = [.. configuration.Select(c => c.Replace("{dir}", Directory, StringComparison.Ordinal))] });
            }

            return cases;
        });
    }

    public string Directory { get; } = System.IO.Directory.CreateTempSubdirectory("ipcbench-security-refusals-").FullName;

    internal RefusingDaemons Daemons { get; }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        await Daemons.WaitForAllAsync();
        System.IO.Directory.Delete(Directory, recursive: true);
    }
}
