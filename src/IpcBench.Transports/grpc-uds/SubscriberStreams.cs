using System.Threading.Channels;
using Grpc.Core;
using IpcBench.Transports.GrpcUds.Wire;

namespace IpcBench.Transports.GrpcUds;

/// <summary>
/// One publisher's subscriber calls. Each call gets a bounded queue that its own handler drains into its response
/// stream, so a message is handed to every stream by the publisher thread while gRPC writes run where gRPC wants them;
/// a full queue blocks the publisher (backpressure, never a drop) until HTTP/2 flow control lets the stream move on.
/// </summary>
internal sealed class SubscriberStreams(int queueCapacity)
{
    private readonly Lock _gate = new();
    private readonly SemaphoreSlim _arrived = new(0);
    private Subscriber[] _subscribers = [];
    private bool _closed;

    public IReadOnlyList<Subscriber> Current => Volatile.Read(ref _subscribers);

    /// <summary>Runs one subscriber's call until the publisher closes (after its queue is written out) or the call ends.</summary>
    public async Task ServeAsync(int subscriberIndex, IServerStreamWriter<BenchMessage> responses, IAsyncStreamReader<BenchMessage>? echoes, ServerCallContext context)
    {
        var subscriber = new Subscriber(subscriberIndex, echoes, queueCapacity);
        lock (_gate)
        {
            if (_closed)
            {
                throw new RpcException(new Status(StatusCode.Unavailable, "the publisher has stopped"));
            }

            _subscribers = [.. _subscribers, subscriber];
        }

        try
        {
            // Headers now, so the subscriber knows it is registered before the first message exists.
            await context.WriteResponseHeadersAsync([]).ConfigureAwait(false);
            _arrived.Release();
            var reader = subscriber.Queue.Reader;
            while (await reader.WaitToReadAsync(context.CancellationToken).ConfigureAwait(false))
            {
                while (reader.TryRead(out var outgoing))
                {
                    try
                    {
                        await responses.WriteAsync(outgoing.Message, context.CancellationToken).ConfigureAwait(false);
                    }
                    finally
                    {
                        outgoing.Release();
                    }
                }
            }
        }
        catch (OperationCanceledException) when (context.CancellationToken.IsCancellationRequested)
        {
            // The subscriber went away (or the server aborted the call): the publisher learns it from the closed queue.
        }
        finally
        {
            subscriber.Queue.Writer.TryComplete();
            while (subscriber.Queue.Reader.TryRead(out var left))
            {
                left.Release();
            }
        }
    }

    public void WaitFor(int count, TimeSpan timeout, string address, CancellationToken cancellationToken)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (Current.Count < count)
        {
            var remaining = deadline - DateTime.UtcNow;
            if (remaining <= TimeSpan.Zero || !_arrived.Wait(remaining, cancellationToken))
            {
                throw new TimeoutException($"Only {Current.Count} of {count} subscribers called {address} within {timeout.TotalSeconds:0.#} s.");
            }
        }
    }

    /// <summary>Queues the message on every subscriber's stream, waiting while a queue is full.</summary>
    public void Publish(Outgoing outgoing)
    {
        try
        {
            foreach (var subscriber in Current)
            {
                outgoing.AddReference();
                var writer = subscriber.Queue.Writer;
                while (!writer.TryWrite(outgoing))
                {
                    if (!writer.WaitToWriteAsync().AsTask().GetAwaiter().GetResult())
                    {
                        outgoing.Release();
                        throw new IOException($"The stream of subscriber {subscriber.Index} has ended (it disconnected, or the publisher was closed).");
                    }
                }
            }
        }
        finally
        {
            outgoing.Release();
        }
    }

    /// <summary>No new calls; each handler writes out what is queued and returns.</summary>
    public void Close()
    {
        lock (_gate)
        {
            _closed = true;
        }

        foreach (var subscriber in Current)
        {
            subscriber.Queue.Writer.TryComplete();
        }
    }

    internal sealed class Subscriber(int index, IAsyncStreamReader<BenchMessage>? echoes, int queueCapacity)
    {
        public int Index { get; } = index;

        /// <summary>Round trip only: the subscriber's echoes, read by the publisher thread.</summary>
        public IAsyncStreamReader<BenchMessage>? Echoes { get; } = echoes;

        public Channel<Outgoing> Queue { get; } = Channel.CreateBounded<Outgoing>(new BoundedChannelOptions(queueCapacity)
        {
            SingleReader = true,
            SingleWriter = true,
            FullMode = BoundedChannelFullMode.Wait,
        });
    }
}
