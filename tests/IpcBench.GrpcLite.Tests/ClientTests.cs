using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using IpcBench.GrpcLite.Health.V1;
using IpcBench.GrpcLite.Tests.V1;
using Microsoft.Extensions.Logging;
using ServingStatus = IpcBench.GrpcLite.Health.V1.HealthCheckResponse.Types.ServingStatus;

namespace IpcBench.GrpcLite.Tests;

/// <summary>The client against the server, over loopback TCP and over a unix socket.</summary>
public sealed class ClientTests(TestServerFixture fixture) : IClassFixture<TestServerFixture>
{
    private const string Echo = "/grpclite.test.v1.TestService/Echo";
    private const string Count = "/grpclite.test.v1.TestService/Count";
    private const string Validate = "/grpclite.test.v1.TestService/Validate";
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(10);

    private TestServer Server => fixture.Server;

    [Theory]
    [InlineData("tcp", "ipv4:127.0.0.1:")]
    [InlineData("unix", "unix:")]
    public async Task Unary_RoundTrips(string transport, string peerPrefix)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));

        var response = await channel.UnaryAsync(Echo, new EchoRequest
        {
            Text = "héllo",
            Delay = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(1)),
            Payload = ByteString.CopyFrom(new byte[1000]),
            Mood = EchoRequest.Types.Mood.Calm,
        }, EchoResponse.Parser);

        Assert.Equal("héllo", response.Text);
        Assert.Equal(TimeSpan.FromMilliseconds(1), response.Delay.ToTimeSpan());
        Assert.Equal(1000, response.PayloadLength);
        Assert.Equal(EchoRequest.Types.Mood.Calm, response.Mood);
        Assert.StartsWith(peerPrefix, response.Peer);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task DefaultHeaders_ReachTheHandler(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport), [new("authorization", "Bearer abc")]);

        var response = await channel.UnaryAsync(Echo, new EchoRequest(), EchoResponse.Parser);

        Assert.Equal("Bearer abc", response.Authorization);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task ServerStreaming_ReturnsAllMessagesThenEnds(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));

        var values = new List<int>();
        await foreach (var message in channel.ServerStreamingAsync(Count, new CountRequest { Count = 50 }, CountResponse.Parser))
        {
            values.Add(message.Value);
        }

        Assert.Equal(Enumerable.Range(1, 50), values);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task ServerStreaming_EachMessageArrivesAtOnce_AndStoppingEarlyCancelsTheServer(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));
        var tag = Guid.NewGuid().ToString();
        var request = new CountRequest { Count = 3, Interval = Duration.FromTimeSpan(TimeSpan.FromSeconds(30)), Tag = tag };

        var stopwatch = Stopwatch.StartNew();
        await foreach (var message in channel.ServerStreamingAsync(Count, request, CountResponse.Parser))
        {
            Assert.Equal(1, message.Value);
            break;
        }

        // The second message is 30 s away, so seeing the first this soon means it was flushed on its own.
        Assert.True(stopwatch.Elapsed < TimeSpan.FromSeconds(5), $"first message took {stopwatch.Elapsed}");
        await Server.CancellationObserved(tag).WaitAsync(Patience);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task RpcException_ReachesClientWithCodeAndDetail(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(Validate, new ValidateRequest { X = 9 }, ValidateResponse.Parser));

        Assert.Equal(StatusCode.InvalidArgument, ex.StatusCode);
        Assert.Equal("field x must be 1..5", ex.Detail);
    }

    [Fact]
    public async Task RpcException_DetailSurvivesPercentEncoding()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(Validate, new ValidateRequest { X = -1 }, ValidateResponse.Parser));

        Assert.Equal("x is négative: 100% wrong\nreally", ex.Detail);
    }

    [Fact]
    public async Task Success_PassesThrough()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);

        var response = await channel.UnaryAsync(Validate, new ValidateRequest { X = 3 }, ValidateResponse.Parser);

        Assert.Equal(3, response.X);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task HandlerException_IsInternal_AndLogged(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));

        var ex = await Assert.ThrowsAsync<RpcException>(() =>
            channel.UnaryAsync("/grpclite.test.v1.TestService/Crash", new ValidateRequest(), ValidateResponse.Parser));

        Assert.Equal(StatusCode.Internal, ex.StatusCode);
        Assert.Contains("kaboom", ex.Detail);
        Assert.Contains(Server.Logs.Entries, e => e.Level == LogLevel.Error && e.Exception is InvalidOperationException { Message: "kaboom" });
    }

    [Theory]
    [InlineData("/grpclite.test.v1.TestService/NotRegistered", "Method")]
    [InlineData("/grpclite.test.v1.TestService/NotInTheProto", "Method")]
    [InlineData("/no.such.Service/Method", "Service no.such.Service")]
    public async Task UnknownMethod_IsUnimplemented(string method, string detailStart)
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(method, new ValidateRequest(), ValidateResponse.Parser));

        Assert.Equal(StatusCode.Unimplemented, ex.StatusCode);
        Assert.StartsWith(detailStart, ex.Detail);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task ErrorAfterMessages_DeliversMessagesThenThrows(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));

        var values = new List<int>();
        var ex = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var message in channel.ServerStreamingAsync(Count, new CountRequest { Count = 5, FailAfter = 2 }, CountResponse.Parser))
            {
                values.Add(message.Value);
            }
        });

        Assert.Equal([1, 2], values);
        Assert.Equal(StatusCode.Aborted, ex.StatusCode);
        Assert.Equal("failed after 2", ex.Detail);
    }

    [Fact]
    public async Task OversizedRequest_IsResourceExhausted()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);
        var request = new EchoRequest { Payload = ByteString.CopyFrom(new byte[(4 * 1024 * 1024) + 1]) };

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(Echo, request, EchoResponse.Parser));

        Assert.Equal(StatusCode.ResourceExhausted, ex.StatusCode);
    }

    [Fact]
    public async Task RequestJustUnderTheLimit_IsAccepted()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);
        var request = new EchoRequest { Payload = ByteString.CopyFrom(new byte[(4 * 1024 * 1024) - 16]) };

        var response = await channel.UnaryAsync(Echo, request, EchoResponse.Parser);

        Assert.Equal(request.Payload.Length, response.PayloadLength);
    }

    [Fact]
    public async Task OversizedResponse_IsResourceExhaustedOnTheClient()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress) { MaxReceiveMessageSize = 100 };

        var ex = await Assert.ThrowsAsync<RpcException>(() =>
            channel.UnaryAsync(Echo, new EchoRequest { Text = new string('x', 200) }, EchoResponse.Parser));

        Assert.Equal(StatusCode.ResourceExhausted, ex.StatusCode);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task Cancellation_ThrowsOperationCanceled_AndReachesTheHandler(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));
        var tag = Guid.NewGuid().ToString();
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => channel.UnaryAsync(
            Echo, new EchoRequest { Text = tag, Delay = Duration.FromTimeSpan(TimeSpan.FromMinutes(1)) }, EchoResponse.Parser, cts.Token));

        await Server.CancellationObserved(tag).WaitAsync(Patience);
    }

    [Fact]
    public async Task StreamingCancellation_ThrowsOperationCanceled_AndReachesTheHandler()
    {
        using var channel = new GrpcLiteChannel(Server.UnixAddress);
        var tag = Guid.NewGuid().ToString();
        using var cts = new CancellationTokenSource();
        var request = new CountRequest { Count = 1000, Interval = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(20)), Tag = tag };

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
        {
            await foreach (var message in channel.ServerStreamingAsync(Count, request, CountResponse.Parser, cts.Token))
            {
                if (message.Value == 3)
                {
                    await cts.CancelAsync();
                }
            }
        });

        await Server.CancellationObserved(tag).WaitAsync(Patience);
    }

    [Fact]
    public async Task Deadline_IsDeadlineExceeded_AndReachesTheHandler()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);
        var tag = Guid.NewGuid().ToString();

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(
            Echo, new EchoRequest { Text = tag, Delay = Duration.FromTimeSpan(TimeSpan.FromMinutes(1)) }, EchoResponse.Parser,
            deadline: TimeSpan.FromMilliseconds(300)));

        Assert.Equal(StatusCode.DeadlineExceeded, ex.StatusCode);
        await Server.CancellationObserved(tag).WaitAsync(Patience);
    }

    [Fact]
    public async Task Deadline_NotReached_Succeeds()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);

        var response = await channel.UnaryAsync(Echo, new EchoRequest { Text = "in time" }, EchoResponse.Parser, deadline: TimeSpan.FromSeconds(30));

        Assert.Equal("in time", response.Text);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("unix")]
    public async Task StreamReset_MidStream_IsUnavailable(string transport)
    {
        using var channel = new GrpcLiteChannel(Server.Address(transport));

        var values = new List<int>();
        var ex = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var message in channel.ServerStreamingAsync(Count, new CountRequest { Count = 5, AbortAfter = 2 }, CountResponse.Parser))
            {
                values.Add(message.Value);
            }
        });

        // A reset may overtake messages already sent, which HttpClient then drops; what matters is that it throws.
        Assert.Equal(StatusCode.Unavailable, ex.StatusCode);
        Assert.Equal(values, new[] { 1, 2 }.Take(values.Count));
    }

    [Fact]
    public async Task NothingListeningOnTcp_IsUnavailable()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        using var channel = new GrpcLiteChannel($"127.0.0.1:{port}");

        var ex = await Assert.ThrowsAsync<RpcException>(() => channel.UnaryAsync(Echo, new EchoRequest(), EchoResponse.Parser));

        Assert.Equal(StatusCode.Unavailable, ex.StatusCode);
    }

    [Fact]
    public async Task MissingUnixSocket_IsUnavailable()
    {
        using var channel = new GrpcLiteChannel($"unix:{Path.Combine(Path.GetTempPath(), $"grpclite-missing-{Guid.NewGuid():N}.sock")}");

        var ex = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var unused in channel.ServerStreamingAsync(Count, new CountRequest { Count = 1 }, CountResponse.Parser))
            {
            }
        });

        Assert.Equal(StatusCode.Unavailable, ex.StatusCode);
    }

    [Fact]
    public async Task Health_CheckAndWatch_FollowSetStatus()
    {
        using var channel = new GrpcLiteChannel(Server.UnixAddress);
        var service = $"test.{Guid.NewGuid():N}";

        var overall = await channel.UnaryAsync("/grpc.health.v1.Health/Check", new HealthCheckRequest(), HealthCheckResponse.Parser);
        Assert.Equal(ServingStatus.Serving, overall.Status);
        var unknown = await Assert.ThrowsAsync<RpcException>(() =>
            channel.UnaryAsync("/grpc.health.v1.Health/Check", new HealthCheckRequest { Service = service }, HealthCheckResponse.Parser));
        Assert.Equal(StatusCode.NotFound, unknown.StatusCode);

        using var cts = new CancellationTokenSource(Patience);
        var seen = new List<ServingStatus>();
        await foreach (var update in channel.ServerStreamingAsync("/grpc.health.v1.Health/Watch", new HealthCheckRequest { Service = service }, HealthCheckResponse.Parser, cts.Token))
        {
            seen.Add(update.Status);
            if (update.Status == ServingStatus.ServiceUnknown)
            {
                Server.Health.SetStatus(service, ServingStatus.NotServing);
            }
            else if (update.Status == ServingStatus.NotServing)
            {
                Server.Health.SetStatus(service, ServingStatus.Serving);
            }
            else
            {
                break;
            }
        }

        Assert.Equal([ServingStatus.ServiceUnknown, ServingStatus.NotServing, ServingStatus.Serving], seen);
        var check = await channel.UnaryAsync("/grpc.health.v1.Health/Check", new HealthCheckRequest { Service = service }, HealthCheckResponse.Parser);
        Assert.Equal(ServingStatus.Serving, check.Status);
    }

    [Fact]
    public async Task ManyConcurrentCalls_ShareTheChannel()
    {
        using var channel = new GrpcLiteChannel(Server.TcpAddress);

        var responses = await Task.WhenAll(Enumerable.Range(0, 200).Select(i =>
            channel.UnaryAsync(Echo, new EchoRequest { Text = $"m{i}", Delay = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(50)) }, EchoResponse.Parser)));

        Assert.Equal(Enumerable.Range(0, 200).Select(i => $"m{i}"), responses.Select(r => r.Text));
    }
}
