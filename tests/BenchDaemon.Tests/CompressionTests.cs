using System.Collections.Concurrent;
using Grpc.Core;
using Grpc.Net.Client;
using Grpc.Net.Compression;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Compressed requests (gzip and deflate) are accepted on the control plane; responses stay uncompressed unless the
/// daemon is configured otherwise, whatever the client accepts. grpcurl cannot send compressed requests (it has no
/// option for it), so these calls come from Grpc.Net.Client alone.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class CompressionTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Theory]
    [InlineData("gzip")]
    [InlineData("deflate")]
    public async Task CompressedRequests_ListTransportsAndStartScenario_Succeed_AndResponsesAreNotCompressed(string encoding)
    {
        var seen = new WireHeaders();
        using var channel = GrpcChannel.ForAddress("http://" + _daemon.Address, new GrpcChannelOptions
        {
            HttpHandler = new RecordingHandler(seen) { InnerHandler = new SocketsHttpHandler() },
            DisposeHttpClient = true,
            CompressionProviders = [new GzipCompressionProvider(System.IO.Compression.CompressionLevel.Fastest), new DeflateCompressionProvider(System.IO.Compression.CompressionLevel.Fastest)],
        });
        var client = new BenchControl.BenchControlClient(channel);
        // Grpc.Net.Client's per-call switch for compressing the request message.
        var compress = new Metadata { { "grpc-internal-encoding-request", encoding } };

        var transports = await client.ListTransportsAsync(new ListTransportsRequest(), compress, DateTime.UtcNow.AddSeconds(30));
        Assert.Contains(transports.Transports, t => t.Id == "channels");

        var started = await client.StartScenarioAsync(new StartScenarioRequest { Spec = Specs.Stream("channels", 1, 1, Specs.Milliseconds(300)) }, compress, DateTime.UtcNow.AddSeconds(30));
        var result = await _daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(30));
        new ScenarioExpectations(result, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();

        // The requests really went compressed, and the answers came back plain although the client accepts both.
        Assert.Equal([encoding, encoding], seen.RequestEncodings);
        Assert.All(seen.ResponseEncodings, e => Assert.True(e is null or "identity", $"response grpc-encoding '{e}'"));
        Assert.Equal(2, seen.ResponseEncodings.Count);
    }

    private sealed class WireHeaders
    {
        public ConcurrentQueue<string?> RequestEncodingQueue { get; } = new();

        public ConcurrentQueue<string?> ResponseEncodingQueue { get; } = new();

        public IReadOnlyList<string?> RequestEncodings => [.. RequestEncodingQueue];

        public IReadOnlyList<string?> ResponseEncodings => [.. ResponseEncodingQueue];
    }

    private sealed class RecordingHandler(WireHeaders seen) : DelegatingHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            seen.RequestEncodingQueue.Enqueue(request.Headers.TryGetValues("grpc-encoding", out var sent) ? string.Join(",", sent) : null);
            var response = await base.SendAsync(request, cancellationToken);
            seen.ResponseEncodingQueue.Enqueue(response.Headers.TryGetValues("grpc-encoding", out var received) ? string.Join(",", received) : null);
            return response;
        }
    }
}
