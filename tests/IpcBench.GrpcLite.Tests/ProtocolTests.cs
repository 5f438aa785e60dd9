using System.Net;
using System.Net.Http.Headers;

namespace IpcBench.GrpcLite.Tests;

public sealed class ProtocolTests(TestServerFixture fixture) : IClassFixture<TestServerFixture>
{
    [Theory]
    [InlineData("plain ascii", "plain ascii")]
    [InlineData("100%", "100%25")]
    [InlineData("line\nbreak", "line%0Abreak")]
    [InlineData("négative", "n%C3%A9gative")]
    public void GrpcMessage_IsPercentEncoded(string message, string encoded)
    {
        Assert.Equal(encoded, GrpcProtocol.EncodeMessage(message));
        Assert.Equal(message, GrpcProtocol.DecodeMessage(encoded));
    }

    [Fact]
    public void GrpcMessage_IsCutToAHeaderClientsAccept()
    {
        var limited = GrpcProtocol.LimitMessage(new string('x', 100_000));

        Assert.StartsWith(new string('x', GrpcProtocol.MaxStatusMessageLength) + "... (97952 more characters)", limited, StringComparison.Ordinal);
        Assert.Equal("short", GrpcProtocol.LimitMessage("short"));
    }

    [Theory]
    [InlineData("bad %zz escape")]
    [InlineData("trailing %4")]
    [InlineData("trailing %")]
    public void GrpcMessage_MalformedEscapes_AreKept(string message) =>
        Assert.Equal(message, GrpcProtocol.DecodeMessage(message));

    [Theory]
    [InlineData(1, "1u")] // rounds up: a deadline must never shrink
    [InlineData(TimeSpan.TicksPerMillisecond, "1000u")]
    [InlineData(100 * TimeSpan.TicksPerSecond, "100000m")] // 100 s in µs would need 9 digits
    [InlineData(200_000 * TimeSpan.TicksPerSecond, "200000S")]
    public void Timeout_UsesTheFinestUnitThatFitsEightDigits(long ticks, string expected)
    {
        var formatted = GrpcProtocol.FormatTimeout(TimeSpan.FromTicks(ticks));

        Assert.Equal(expected, formatted);
        Assert.True(GrpcProtocol.TryParseTimeout(formatted, out var parsed));
        Assert.True(parsed >= TimeSpan.FromTicks(ticks));
    }

    [Theory]
    [InlineData("5S", 5_000)]
    [InlineData("250m", 250)]
    [InlineData("2M", 120_000)]
    [InlineData("1H", 3_600_000)]
    public void Timeout_Parses(string value, int milliseconds)
    {
        Assert.True(GrpcProtocol.TryParseTimeout(value, out var parsed));
        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), parsed);
    }

    [Theory]
    [InlineData("")]
    [InlineData("S")]
    [InlineData("123456789S")]
    [InlineData("5x")]
    [InlineData("-5S")]
    public void Timeout_RejectsMalformed(string value) => Assert.False(GrpcProtocol.TryParseTimeout(value, out _));

    [Theory]
    [InlineData("application/grpc", true)]
    [InlineData("application/grpc+proto", true)]
    [InlineData("application/grpc; charset=utf-8", true)]
    [InlineData("application/grpc+json", false)]
    [InlineData("application/json", false)]
    [InlineData(null, false)]
    public void ContentType_AcceptsProtobufGrpcOnly(string? contentType, bool expected) =>
        Assert.Equal(expected, GrpcProtocol.IsGrpcContentType(contentType));

    [Fact]
    public async Task NonGrpcContentType_OnAGrpcPath_Is415()
    {
        using var response = await PostHttp2("/grpclite.test.v1.TestService/Echo", "application/json");

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
    }

    [Fact]
    public async Task NonGrpcRequest_ToAnUnknownPath_Is404()
    {
        using var response = await PostHttp2("/some/thing", "application/json");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
    }

    /// <summary>
    /// A request body that is not exactly one well-formed message is the caller's mistake: INVALID_ARGUMENT, never
    /// INTERNAL (which would claim the server broke) and never a dropped connection.
    /// </summary>
    [Theory]
    [InlineData("compressed flag, no grpc-encoding", new byte[] { 1, 0, 0, 0, 0 }, "Compressed")]
    [InlineData("unknown flag bits", new byte[] { 0x80, 0, 0, 0, 0 }, "flags 0x80")]
    [InlineData("truncated message", new byte[] { 0, 0, 0, 0, 9, 1 }, "middle of a message")]
    [InlineData("truncated header", new byte[] { 0, 0, 0 }, "middle of a message")]
    [InlineData("no message", new byte[0], "without a message")]
    [InlineData("two messages", new byte[] { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, "more than one message")]
    [InlineData("invalid protobuf (bad wire type)", new byte[] { 0, 0, 0, 0, 2, 0x0f, 0x01 }, "deserialize")]
    [InlineData("invalid protobuf (length past the end)", new byte[] { 0, 0, 0, 0, 2, 0x0a, 0x7f }, "deserialize")]
    [InlineData("invalid protobuf (varint too long)", new byte[] { 0, 0, 0, 0, 11, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, "deserialize")]
    public async Task MalformedRequest_IsInvalidArgument(string what, byte[] body, string detail)
    {
        using var response = await PostHttp2("/grpclite.test.v1.TestService/Echo", "application/grpc", body);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.True(response.Headers.GetValues("grpc-status").Single() == "3", what);
        Assert.Contains(detail, GrpcProtocol.DecodeMessage(response.Headers.GetValues("grpc-message").Single()), StringComparison.Ordinal);
    }

    [Fact]
    public async Task UnsupportedGrpcEncoding_IsUnimplemented()
    {
        using var response = await PostHttp2("/grpclite.test.v1.TestService/Echo", "application/grpc", [0, 0, 0, 0, 0], ("grpc-encoding", "gzip"));

        Assert.Equal("12", response.Headers.GetValues("grpc-status").Single());
        Assert.Equal("identity", response.Headers.GetValues("grpc-accept-encoding").Single());
    }

    private async Task<HttpResponseMessage> PostHttp2(string path, string contentType, byte[]? body = null, params (string Name, string Value)[] headers)
    {
        using var http = new HttpClient();
        var content = new ByteArrayContent(body ?? []);
        content.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType);
        using var request = new HttpRequestMessage(HttpMethod.Post, fixture.Server.TcpAddress + path)
        {
            Content = content,
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        foreach (var (name, value) in headers)
        {
            request.Headers.TryAddWithoutValidation(name, value);
        }

        return await http.SendAsync(request);
    }
}
