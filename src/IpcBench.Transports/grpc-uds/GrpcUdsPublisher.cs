using System.Buffers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;

namespace IpcBench.Transports.GrpcUds;

/// <summary>
/// One publisher: a Kestrel gRPC server of its own on a Unix socket in the runtime directory (h2c), as a .NET service
/// following Microsoft's IPC guidance would host it. Each message is a new protobuf message over a pooled buffer.
/// </summary>
internal sealed class GrpcUdsPublisher : IPublisherEndpoint
{
    /// <summary>Room for the header fields around the payload in a protobuf message.</summary>
    internal const int WireOverheadBytes = 1024;

    private static readonly TimeSpan GracefulStop = TimeSpan.FromSeconds(2);

    private readonly WebApplication _server;
    private readonly SubscriberStreams _streams;
    private readonly byte[] _replyHeader = new byte[MessageHeader.Size];
    private byte[]? _loaned;
    private int _loanedLength;
    private int _nextReply;
    private int _disposed;

    private GrpcUdsPublisher(WebApplication server, SubscriberStreams streams, string socketPath)
    {
        _server = server;
        _streams = streams;
        Address = socketPath;
    }

    public string Address { get; }

    public static GrpcUdsPublisher Start(PublisherOptions options)
    {
        var socketPath = Path.Combine(options.Environment.RuntimeDirectory, $"{options.ScenarioKey}-p{options.PublisherIndex}.grpc.sock");
        File.Delete(socketPath);

        // About 4 MiB of messages in flight per subscriber, at least 2 and at most 64: enough to keep HTTP/2 busy.
        var streams = new SubscriberStreams(Math.Clamp(4 * 1024 * 1024 / options.MaxMessageBytes, 2, 64));

        // The empty builder reads no appsettings, environment or command line: the daemon's own settings (its Kestrel
        // endpoints, ASPNETCORE_URLS) must not leak into a publisher's server.
        var builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions());
        builder.WebHost.UseKestrelCore().ConfigureKestrel(kestrel =>
            kestrel.ListenUnixSocket(socketPath, listen => listen.Protocols = HttpProtocols.Http2));
        builder.Services.AddSingleton(streams);
        builder.Services.AddGrpc(grpc =>
        {
            grpc.MaxReceiveMessageSize = options.MaxMessageBytes + WireOverheadBytes;
            grpc.MaxSendMessageSize = null;
        });
        var server = builder.Build();
        server.MapGrpcService<BenchStreamService>();
        try
        {
            server.StartAsync().GetAwaiter().GetResult();
        }
        catch
        {
            ((IDisposable)server).Dispose();
            File.Delete(socketPath);
            throw;
        }

        return new GrpcUdsPublisher(server, streams, socketPath);
    }

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken) =>
        _streams.WaitFor(count, timeout, Address, cancellationToken);

    public Span<byte> Loan(int length)
    {
        if (_loaned is not null)
        {
            ArrayPool<byte>.Shared.Return(_loaned);
        }

        _loaned = ArrayPool<byte>.Shared.Rent(length);
        _loanedLength = length;
        return _loaned.AsSpan(0, length);
    }

    public void Send()
    {
        var buffer = _loaned ?? throw new InvalidOperationException("Send without Loan.");
        _loaned = null;
        if (Volatile.Read(ref _disposed) != 0)
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw new IOException($"The publisher at {Address} was closed.");
        }

        _streams.Publish(new Outgoing(buffer, _loanedLength));
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        // Every subscriber echoes every message once and in order, so reading the streams in turn sees each echo.
        var subscribers = _streams.Current;
        var echoes = subscribers[_nextReply].Echoes ?? throw new InvalidOperationException("Round trip needs Exchange calls.");
        _nextReply = (_nextReply + 1) % subscribers.Count;
        if (!GrpcCalls.MoveNext(echoes, cancellationToken))
        {
            reply = default;
            return false;
        }

        WireMessages.WriteHeader(echoes.Current, _replyHeader);
        reply = _replyHeader;
        return true;
    }

    public void ReleaseReply()
    {
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // Queues close first: handlers write out what is queued (the end-of-stream included) and return, and a publisher
        // blocked on a full queue gets its IOException. A handler stuck on a subscriber that stopped reading is aborted
        // when the graceful stop runs out.
        _streams.Close();
        using (var graceful = new CancellationTokenSource(GracefulStop))
        {
            try
            {
                _server.StopAsync(graceful.Token).GetAwaiter().GetResult();
            }
            catch (OperationCanceledException)
            {
            }
        }

        _server.DisposeAsync().AsTask().GetAwaiter().GetResult();
        File.Delete(Address);
    }

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IPublisherPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(GrpcUdsPublisher endpoint) : IPublisherPath
    {
        public bool Segmented => false;

        public bool FirstSegmentWritableUntilSend => true;

        public Span<byte> LoanFirstSegment(int length) => endpoint.Loan(length);

        public Span<byte> LoanNextSegment() => [];

        public void Send() => endpoint.Send();

        public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) =>
            endpoint.TryReceiveReply(out reply, cancellationToken);

        public void ReleaseReply() => endpoint.ReleaseReply();
    }
}
