using Google.Protobuf.WellKnownTypes;
using IpcBench.GrpcLite.Tests.V1;

namespace IpcBench.GrpcLite.Tests;

/// <summary>An agent treats the end of a server stream as its daemon dying, so that end must never look like success.</summary>
public sealed class ShutdownTests
{
    private const string Count = "/grpclite.test.v1.TestService/Count";

    public enum Stop
    {
        // Handlers see their token cancelled and the client gets UNAVAILABLE in the trailers.
        Graceful,

        // Kestrel drops connections at once (an already-cancelled stop token), racing the handlers' trailers.
        Abrupt,

        // The handler never ends in time, so the only signal is the connection dropping, as when the process dies.
        ConnectionDropped,
    }

    [Theory]
    [InlineData("tcp", Stop.Graceful)]
    [InlineData("unix", Stop.Graceful)]
    [InlineData("tcp", Stop.Abrupt)]
    [InlineData("unix", Stop.Abrupt)]
    [InlineData("tcp", Stop.ConnectionDropped)]
    [InlineData("unix", Stop.ConnectionDropped)]
    public async Task ServerStoppingMidStream_IsUnavailable(string transport, Stop stop)
    {
        await using var server = await TestServer.StartAsync();
        using var channel = new GrpcLiteChannel(server.Address(transport));
        var request = new CountRequest
        {
            Count = 100_000,
            Interval = Duration.FromTimeSpan(TimeSpan.FromMilliseconds(20)),
            IgnoreCancellation = stop == Stop.ConnectionDropped,
        };
        Task? stopping = null;

        var ex = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var message in channel.ServerStreamingAsync(Count, request, CountResponse.Parser))
            {
                stopping ??= server.StopAsync(stop == Stop.Graceful ? default : new CancellationToken(canceled: true));
            }
        }).WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(StatusCode.Unavailable, ex.StatusCode);
        if (stop == Stop.Graceful)
        {
            Assert.Equal("The server is shutting down.", ex.Detail);
        }

        await stopping!.WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task ServerStopping_MarksHealthNotServing()
    {
        await using var server = await TestServer.StartAsync();

        await server.StopAsync();

        Assert.Equal(IpcBench.GrpcLite.Health.V1.HealthCheckResponse.Types.ServingStatus.NotServing, server.Health.GetStatus(""));
    }
}
