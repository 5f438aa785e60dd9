using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using Microsoft.Extensions.Logging.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>The one mapping from engine outcomes to gRPC statuses (the daemon-level tests see it through real calls).</summary>
[Collection(LightCollection.Name)]
public sealed class RefusalInterceptorTests
{
    private readonly RefusalInterceptor _interceptor = new(NullLogger<RefusalInterceptor>.Instance);

    [Theory]
    [InlineData(RefusalKind.InvalidArgument, StatusCode.InvalidArgument)]
    [InlineData(RefusalKind.NotFound, StatusCode.NotFound)]
    [InlineData(RefusalKind.FailedPrecondition, StatusCode.FailedPrecondition)]
    [InlineData(RefusalKind.ResourceExhausted, StatusCode.ResourceExhausted)]
    [InlineData(RefusalKind.PermissionDenied, StatusCode.PermissionDenied)]
    [InlineData(RefusalKind.Unavailable, StatusCode.Unavailable)]
    public async Task ARefusal_BecomesTheStatusOfItsKind_WithItsFieldAndReason(RefusalKind kind, StatusCode expected)
    {
        var e = await Assert.ThrowsAsync<RpcException>(() => CallAsync(new RequestRefusedException(kind, "spec.publishers", "must be 1..64; got 0")));

        Assert.Equal(expected, e.StatusCode);
        Assert.Equal("spec.publishers: must be 1..64; got 0", e.Status.Detail);
    }

    [Fact]
    public async Task ALongRefusal_IsCut_SoItFitsInAHeader()
    {
        var e = await Assert.ThrowsAsync<RpcException>(() => CallAsync(new RequestRefusedException(RefusalKind.InvalidArgument, "spec.transport", new string('x', 200_000))));

        Assert.StartsWith("spec.transport: xxx", e.Status.Detail, StringComparison.Ordinal);
        Assert.EndsWith("more characters)", e.Status.Detail, StringComparison.Ordinal);
        Assert.True(e.Status.Detail.Length < 2100, $"{e.Status.Detail.Length} characters");
    }

    [Fact]
    public async Task AnUnexpectedException_IsInternal_WithoutItsDetails()
    {
        var e = await Assert.ThrowsAsync<RpcException>(() => CallAsync(new InvalidOperationException("secret internals")));

        Assert.Equal(StatusCode.Internal, e.StatusCode);
        Assert.DoesNotContain("secret", e.Status.Detail, StringComparison.Ordinal);
        Assert.Contains("log", e.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AStatusAlreadyChosen_PassesThroughUnchanged()
    {
        var original = new RpcException(new Status(StatusCode.DeadlineExceeded, "too slow"));

        var e = await Assert.ThrowsAsync<RpcException>(() => CallAsync(original));

        Assert.Same(original, e);
    }

    private Task<string> CallAsync(Exception thrown) =>
        _interceptor.UnaryServerHandler<string, string>("request", new FakeCallContext(), (_, _) => Task.FromException<string>(thrown));

    private sealed class FakeCallContext : ServerCallContext
    {
        protected override string MethodCore => "/ipcbench.v1.BenchControl/StartScenario";

        protected override string HostCore => "localhost";

        protected override string PeerCore => "ipv4:127.0.0.1:1";

        protected override DateTime DeadlineCore => DateTime.MaxValue;

        protected override Metadata RequestHeadersCore { get; } = [];

        protected override CancellationToken CancellationTokenCore => CancellationToken.None;

        protected override Metadata ResponseTrailersCore { get; } = [];

        protected override Status StatusCore { get; set; }

        protected override WriteOptions? WriteOptionsCore { get; set; }

        protected override AuthContext AuthContextCore { get; } = new(null, []);

        protected override ContextPropagationToken CreatePropagationTokenCore(ContextPropagationOptions? options) => throw new NotSupportedException();

        protected override Task WriteResponseHeadersAsyncCore(Metadata responseHeaders) => Task.CompletedTask;
    }
}
