using System.Text.Json;
using System.Text.RegularExpressions;
using Google.Protobuf.Reflection;

namespace IpcBench.GrpcLite.Tests;

/// <summary>
/// Interop with the real grpcurl, driven the way users do: plaintext, no .proto files, reflection only.
/// grpcurl prints JSON with the .proto field names (snake_case), not proto3 JSON camelCase.
/// </summary>
public sealed class GrpcurlTests(TestServerFixture fixture) : IClassFixture<TestServerFixture>
{
    private const string Service = "grpclite.test.v1.TestService";

    private TestServer Server => fixture.Server;

    [GrpcurlFact]
    public async Task List_ShowsTestHealthAndReflectionServices()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "list");

        Assert.True(exit == 0, stderr);
        var services = stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Contains(Service, services);
        Assert.Contains("grpc.health.v1.Health", services);
        Assert.Contains("grpc.reflection.v1.ServerReflection", services);
        Assert.Contains("grpc.reflection.v1alpha.ServerReflection", services);
    }

    [GrpcurlFact]
    public async Task ListService_ShowsItsMethods()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "list", Service);

        Assert.True(exit == 0, stderr);
        Assert.Contains($"{Service}.Echo", stdout);
        Assert.Contains($"{Service}.Count", stdout);
    }

    [GrpcurlFact]
    public async Task Describe_Service()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "describe", Service);

        Assert.True(exit == 0, stderr);
        Assert.Contains($"{Service} is a service:", stdout);
        Assert.Contains("rpc Echo ( .grpclite.test.v1.EchoRequest ) returns ( .grpclite.test.v1.EchoResponse );", stdout);
        Assert.Contains("rpc Count ( .grpclite.test.v1.CountRequest ) returns ( stream .grpclite.test.v1.CountResponse );", stdout);
    }

    [GrpcurlFact]
    public async Task Describe_MessageWithImportedType()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "describe", "grpclite.test.v1.EchoRequest");

        Assert.True(exit == 0, stderr);
        Assert.Contains("grpclite.test.v1.EchoRequest is a message:", stdout);
        Assert.Contains(".google.protobuf.Duration delay = 2;", stdout);
    }

    [GrpcurlTheory]
    [InlineData("grpclite.test.v1.EchoRequest.Tag", "is a message:")]
    [InlineData("grpclite.test.v1.EchoRequest.Mood", "is an enum:")]
    [InlineData("grpclite.test.v1.TestService.Echo", "is a method:")]
    [InlineData("google.protobuf.Duration", "is a message:")]
    [InlineData("grpc.health.v1.Health", "is a service:")]
    [InlineData("grpc.reflection.v1alpha.ServerReflection", "is a service:")]
    public async Task Describe_NestedImportedAndBuiltInSymbols(string symbol, string expected)
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "describe", symbol);

        Assert.True(exit == 0, stderr);
        Assert.Contains($"{symbol} {expected}", stdout);
    }

    [GrpcurlFact]
    public async Task Describe_UnknownSymbol_Fails()
    {
        var (exit, _, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "describe", "grpclite.test.v1.Nope");

        Assert.NotEqual(0, exit);
        Assert.Contains("grpclite.test.v1.Nope", stderr);
    }

    [GrpcurlFact]
    public async Task Unary_ReturnsJson()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync(
            "-plaintext", "-H", "authorization: Bearer t0ken",
            "-d", """{"text":"hello","delay":"0.010s","mood":"MOOD_CALM","payload":"AAEC"}""",
            Server.HostPort, $"{Service}/Echo");

        Assert.True(exit == 0, stderr);
        using var json = JsonDocument.Parse(stdout);
        var root = json.RootElement;
        Assert.Equal("hello", root.GetProperty("text").GetString());
        Assert.Equal("0.010s", root.GetProperty("delay").GetString());
        Assert.Equal("MOOD_CALM", root.GetProperty("mood").GetString());
        Assert.Equal(3, root.GetProperty("payload_length").GetInt32());
        Assert.Equal("Bearer t0ken", root.GetProperty("authorization").GetString());
        Assert.StartsWith("ipv4:127.0.0.1:", root.GetProperty("peer").GetString());
    }

    [GrpcurlFact]
    public async Task ServerStreaming_ReturnsAllMessages()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", "-d", """{"count":4,"interval":"0.005s"}""", Server.HostPort, $"{Service}/Count");

        Assert.True(exit == 0, stderr);
        var values = Regex.Matches(stdout, "\"value\": (\\d+)").Select(m => int.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));
        Assert.Equal([1, 2, 3, 4], values);
    }

    [GrpcurlFact]
    public async Task RpcException_ShowsCodeAndMessage()
    {
        var (exit, _, stderr) = await Grpcurl.RunAsync("-plaintext", "-d", """{"x":7}""", Server.HostPort, $"{Service}/Validate");

        Assert.NotEqual(0, exit);
        Assert.Contains("Code: InvalidArgument", stderr);
        Assert.Contains("Message: field x must be 1..5", stderr);
    }

    [GrpcurlFact]
    public async Task RpcException_PercentEncodedMessage_IsDecodedByGrpcGo()
    {
        var (exit, _, stderr) = await Grpcurl.RunAsync("-plaintext", "-d", """{"x":-1}""", Server.HostPort, $"{Service}/Validate");

        Assert.NotEqual(0, exit);
        Assert.Contains("Message: x is négative: 100% wrong\nreally", stderr);
    }

    [GrpcurlFact]
    public async Task StreamingError_AfterMessages_ShowsMessagesThenCode()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", "-d", """{"count":5,"fail_after":2}""", Server.HostPort, $"{Service}/Count");

        Assert.NotEqual(0, exit);
        Assert.Equal(2, Regex.Matches(stdout, "\"value\":").Count);
        Assert.Contains("Code: Aborted", stderr);
        Assert.Contains("Message: failed after 2", stderr);
    }

    [GrpcurlFact]
    public async Task HandlerCrash_ShowsInternal()
    {
        var (exit, _, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, $"{Service}/Crash");

        Assert.NotEqual(0, exit);
        Assert.Contains("Code: Internal", stderr);
        Assert.Contains("kaboom", stderr);
    }

    [GrpcurlFact]
    public async Task UnregisteredMethod_ShowsUnimplemented()
    {
        var (exit, _, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, $"{Service}/NotRegistered");

        Assert.NotEqual(0, exit);
        Assert.Contains("Code: Unimplemented", stderr);
    }

    [GrpcurlFact]
    public async Task HealthCheck_IsServing()
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync("-plaintext", Server.HostPort, "grpc.health.v1.Health/Check");

        Assert.True(exit == 0, stderr);
        using var json = JsonDocument.Parse(stdout);
        Assert.Equal("SERVING", json.RootElement.GetProperty("status").GetString());
    }

    [GrpcurlFact]
    public async Task HealthCheck_UnknownService_IsNotFound()
    {
        var (exit, _, stderr) = await Grpcurl.RunAsync("-plaintext", "-d", """{"service":"no.Such"}""", Server.HostPort, "grpc.health.v1.Health/Check");

        Assert.NotEqual(0, exit);
        Assert.Contains("Code: NotFound", stderr);
    }

    [GrpcurlTheory]
    [InlineData("v1")]
    [InlineData("v1alpha")]
    public async Task Reflection_FileContainingSymbol_ReturnsFileThenDependencies(string version)
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync(
            "-plaintext", "-d", """{"host":"h","file_containing_symbol":"grpclite.test.v1.EchoRequest.Tag"}""",
            Server.HostPort, $"grpc.reflection.{version}.ServerReflection/ServerReflectionInfo");

        Assert.True(exit == 0, stderr);
        using var json = JsonDocument.Parse(stdout);
        Assert.Equal("h", json.RootElement.GetProperty("valid_host").GetString());
        var files = json.RootElement.GetProperty("file_descriptor_response").GetProperty("file_descriptor_proto")
            .EnumerateArray()
            .Select(f => FileDescriptorProto.Parser.ParseFrom(f.GetBytesFromBase64()).Name);
        Assert.Equal(["grpclite/test/v1/test.proto", "google/protobuf/duration.proto"], files);
    }

    [GrpcurlTheory]
    [InlineData("""{"file_by_filename":"google/protobuf/duration.proto"}""", "file_descriptor_response")]
    [InlineData("""{"list_services":""}""", "list_services_response")]
    [InlineData("""{"all_extension_numbers_of_type":"grpclite.test.v1.EchoRequest"}""", "all_extension_numbers_response")]
    public async Task Reflection_V1Alpha_AnswersOtherRequests(string request, string expectedField)
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync(
            "-plaintext", "-d", request, Server.HostPort, "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");

        Assert.True(exit == 0, stderr);
        using var json = JsonDocument.Parse(stdout);
        Assert.True(json.RootElement.TryGetProperty(expectedField, out _), stdout);
    }

    [GrpcurlTheory]
    [InlineData("""{"file_containing_symbol":"grpclite.test.v1.Nope"}""")]
    [InlineData("""{"file_by_filename":"nope.proto"}""")]
    public async Task Reflection_Unknown_IsNotFoundErrorResponse(string request)
    {
        var (exit, stdout, stderr) = await Grpcurl.RunAsync(
            "-plaintext", "-d", request, Server.HostPort, "grpc.reflection.v1.ServerReflection/ServerReflectionInfo");

        Assert.True(exit == 0, stderr);
        using var json = JsonDocument.Parse(stdout);
        Assert.Equal(5, json.RootElement.GetProperty("error_response").GetProperty("error_code").GetInt32());
    }
}
