using System.Net;
using System.Net.Http.Headers;
using IpcBench.GrpcLite.Health.V1;
using IpcBench.GrpcLite.Tests.V1;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace IpcBench.GrpcLite.Tests;

/// <summary>
/// The bearer-token filter, listener confinement and TLS. The test server's TCP listener is "tcp", its unix socket
/// listener "unix"; tokens are required on "tcp" only, so the unix socket shows a filter scoped to some listeners.
/// </summary>
public sealed class SecurityTests : IAsyncLifetime
{
    private const string Token = "s3cret-token-for-tests";
    private const string Echo = "/grpclite.test.v1.TestService/Echo";
    private const string HealthCheck = "/grpc.health.v1.Health/Check";

    private TestServer _server = null!;

    public async Task InitializeAsync() => _server = await TestServer.StartAsync(setup: new TestServerSetup
    {
        Services = services => services.AddGrpcLiteBearerToken(o =>
        {
            o.Token = Token;
            o.Listeners.Add("tcp");
            o.Realm = "tests";
        }),
    });

    public async Task DisposeAsync() => await _server.DisposeAsync();

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("Bearer")]
    [InlineData("Bearer ")]
    [InlineData("Basic " + Token)]
    [InlineData("Bearer" + Token)]
    [InlineData("Bearer wrong")]
    [InlineData("Bearer " + Token + "x")]
    [InlineData("Bearer s3cret-token-for-test")]
    [InlineData(Token)]
    public async Task MissingMalformedOrWrongToken_IsUnauthenticated_WithTheSameMessage(string? authorization)
    {
        using var channel = new GrpcLiteChannel(_server.TcpAddress, authorization is null ? null : [new("authorization", authorization)]);

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(Echo, new EchoRequest(), EchoResponse.Parser));

        Assert.Equal(StatusCode.Unauthenticated, ex.StatusCode);
        // One message for every failure: it tells how to authenticate, never which part was wrong.
        Assert.Equal(
            "This server requires a bearer token: send the metadata 'authorization: Bearer <token>' (grpcurl -H 'authorization: Bearer <token>'). The token was missing or not accepted.",
            ex.Detail);
    }

    [Theory]
    [InlineData("Bearer " + Token)]
    [InlineData("bearer " + Token)]
    [InlineData("BEARER  " + Token + " ")]
    public async Task RightToken_IsAccepted(string authorization)
    {
        using var channel = new GrpcLiteChannel(_server.TcpAddress, [new("authorization", authorization)]);

        var response = await channel.UnaryAsync(Echo, new EchoRequest { Text = "in" }, EchoResponse.Parser);

        Assert.Equal("in", response.Text);
    }

    [Fact]
    public async Task Refusal_CarriesAWwwAuthenticateHint()
    {
        using var http = new HttpClient();
        using var request = new HttpRequestMessage(HttpMethod.Post, _server.TcpAddress + Echo)
        {
            Content = new ByteArrayContent([0, 0, 0, 0, 0]),
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        request.Content.Headers.ContentType = MediaTypeHeaderValue.Parse("application/grpc");

        using var response = await http.SendAsync(request);

        Assert.Equal("16", response.Headers.GetValues("grpc-status").Single());
        Assert.Equal("Bearer realm=\"tests\"", response.Headers.WwwAuthenticate.ToString());
    }

    [Fact]
    public async Task Health_NeedsNoToken()
    {
        using var channel = new GrpcLiteChannel(_server.TcpAddress);

        var health = await channel.UnaryAsync(HealthCheck, new HealthCheckRequest(), HealthCheckResponse.Parser);

        Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, health.Status);
    }

    [Theory]
    [InlineData("/grpclite.test.v1.TestService/NotRegistered")]
    [InlineData("/no.such.Service/Method")]
    public async Task UnknownMethods_WithoutAToken_AreUnauthenticated_SoTheyRevealNothing(string method)
    {
        using var channel = new GrpcLiteChannel(_server.TcpAddress);

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(method, new EchoRequest(), EchoResponse.Parser));

        Assert.Equal(StatusCode.Unauthenticated, ex.StatusCode);
    }

    [Fact]
    public async Task ListenersTheFilterIsNotScopedTo_NeedNoToken()
    {
        using var channel = new GrpcLiteChannel(_server.UnixAddress);

        var response = await channel.UnaryAsync(Echo, new EchoRequest { Text = "local" }, EchoResponse.Parser);

        Assert.Equal("local", response.Text);
    }

    [GrpcurlFact]
    public async Task Grpcurl_ReflectionNeedsTheToken_HealthDoesNot()
    {
        var refused = await Grpcurl.RunAsync("-plaintext", _server.HostPort, "list");
        Assert.NotEqual(0, refused.ExitCode);
        Assert.Contains("Unauthenticated", refused.Stderr, StringComparison.Ordinal);

        var listed = await Grpcurl.RunAsync("-plaintext", "-H", $"authorization: Bearer {Token}", _server.HostPort, "list");
        Assert.True(listed.ExitCode == 0, listed.Stderr);
        Assert.Contains("grpclite.test.v1.TestService", listed.Stdout, StringComparison.Ordinal);

        var called = await Grpcurl.RunAsync("-plaintext", "-H", $"authorization: Bearer {Token}", "-d", """{"text":"hi"}""", _server.HostPort, Echo[1..]);
        Assert.True(called.ExitCode == 0, called.Stderr);

        // grpcurl needs reflection to encode even a health check, so the health call sends the token to reflection
        // only (-reflect-header): the call itself goes without.
        var health = await Grpcurl.RunAsync("-plaintext", "-reflect-header", $"authorization: Bearer {Token}", _server.HostPort, HealthCheck[1..]);
        Assert.True(health.ExitCode == 0, health.Stderr);
        Assert.Contains("SERVING", health.Stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EnabledWithoutAToken_FailsAtStart()
    {
        var ex = await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using var server = await TestServer.StartAsync(setup: new TestServerSetup { Services = s => s.AddGrpcLiteBearerToken() });
            using var channel = new GrpcLiteChannel(server.TcpAddress);
            await channel.UnaryAsync(Echo, new EchoRequest(), EchoResponse.Parser);
        });

        Assert.Contains("no token is configured", (ex as OptionsValidationException ?? ex.InnerException)?.Message ?? ex.ToString(), StringComparison.Ordinal);
    }
}

/// <summary>Services confined to some listeners are neither callable nor listed on the others.</summary>
public sealed class ListenerConfinementTests : IAsyncLifetime
{
    private TestServer _server = null!;

    public async Task InitializeAsync() => _server = await TestServer.StartAsync(setup: new TestServerSetup { TestServiceListeners = ["unix"] });

    public async Task DisposeAsync() => await _server.DisposeAsync();

    [Fact]
    public async Task ConfinedService_IsUnimplementedOnOtherListeners()
    {
        using var tcp = new GrpcLiteChannel(_server.TcpAddress);
        using var unix = new GrpcLiteChannel(_server.UnixAddress);

        var ex = await Assert.ThrowsAsync<RpcException>(() => tcp.UnaryAsync("/grpclite.test.v1.TestService/Echo", new EchoRequest(), EchoResponse.Parser));
        var served = await unix.UnaryAsync("/grpclite.test.v1.TestService/Echo", new EchoRequest { Text = "here" }, EchoResponse.Parser);

        Assert.Equal(StatusCode.Unimplemented, ex.StatusCode);
        Assert.Equal("Service grpclite.test.v1.TestService is not served on this endpoint.", ex.Detail);
        Assert.Equal("here", served.Text);
    }

    [GrpcurlFact]
    public async Task Reflection_ListsOnlyTheServicesOfTheListenerAsked()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", _server.HostPort, "list");

        Assert.True(exit == 0, stderr);
        Assert.DoesNotContain("grpclite.test.v1.TestService", stdout, StringComparison.Ordinal);
        Assert.Contains("grpc.health.v1.Health", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public void Reflection_OverTheUnixSocket_ListsTheConfinedService()
    {
        var registry = new GrpcLiteServiceRegistry();
        registry.Add(TestReflection.Descriptor.Services[0], new HashSet<string> { "unix" });
        var reflection = new ReflectionService(registry);
        var request = new Reflection.V1.ServerReflectionRequest { ListServices = "" };

        Assert.Equal(["grpclite.test.v1.TestService"], reflection.Answer(request, "unix").ListServicesResponse.Service.Select(s => s.Name));
        Assert.Empty(reflection.Answer(request, "tcp").ListServicesResponse.Service);
        Assert.Empty(reflection.Answer(request, null).ListServicesResponse.Service);
    }
}

/// <summary>TLS on the TCP listener: h2 by ALPN, with our client and with grpcurl.</summary>
public sealed class TlsTests : IAsyncLifetime
{
    private readonly System.Security.Cryptography.X509Certificates.X509Certificate2 _certificate = TestCertificates.SelfSigned();
    private readonly string _directory = Directory.CreateTempSubdirectory("grpclite-tls-").FullName;
    private TestServer _server = null!;

    public async Task InitializeAsync() => _server = await TestServer.StartAsync(setup: new TestServerSetup { Certificate = _certificate });

    public async Task DisposeAsync()
    {
        await _server.DisposeAsync();
        _certificate.Dispose();
        Directory.Delete(_directory, recursive: true);
    }

    [Fact]
    public async Task ClientTrustingTheCertificate_Calls()
    {
        Assert.StartsWith("https://127.0.0.1:", _server.TcpAddress, StringComparison.Ordinal);
        using var channel = new GrpcLiteChannel(_server.TcpAddress, trustedCertificate: _certificate);

        var response = await channel.UnaryAsync("/grpclite.test.v1.TestService/Echo", new EchoRequest { Text = "tls" }, EchoResponse.Parser);

        Assert.Equal("tls", response.Text);
    }

    [Fact]
    public async Task ClientNotTrustingTheCertificate_IsUnavailable()
    {
        using var other = TestCertificates.SelfSigned();
        using var untrusting = new GrpcLiteChannel(_server.TcpAddress, trustedCertificate: other);
        using var systemRootsOnly = new GrpcLiteChannel(_server.TcpAddress);

        foreach (var channel in new[] { untrusting, systemRootsOnly })
        {
            var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync("/grpclite.test.v1.TestService/Echo", new EchoRequest(), EchoResponse.Parser));
            Assert.Equal(StatusCode.Unavailable, ex.StatusCode);
        }
    }

    [Fact]
    public async Task PlainTextClient_CannotTalkToTheTlsListener()
    {
        using var channel = new GrpcLiteChannel("http://" + _server.HostPort);

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync("/grpclite.test.v1.TestService/Echo", new EchoRequest(), EchoResponse.Parser));

        Assert.Equal(StatusCode.Unavailable, ex.StatusCode);
    }

    [GrpcurlFact]
    public async Task Grpcurl_WithCacert_ListsAndCalls()
    {
        var cacert = TestCertificates.WritePem(_certificate, _directory);

        var list = await Grpcurl.RunAsync("-cacert", cacert, _server.HostPort, "list");
        var call = await Grpcurl.RunAsync("-cacert", cacert, "-d", """{"text":"over tls"}""", _server.HostPort, "grpclite.test.v1.TestService/Echo");

        Assert.True(list.ExitCode == 0, list.Stderr);
        Assert.Contains("grpclite.test.v1.TestService", list.Stdout, StringComparison.Ordinal);
        Assert.True(call.ExitCode == 0, call.Stderr);
        Assert.Contains("over tls", call.Stdout, StringComparison.Ordinal);
    }
}
