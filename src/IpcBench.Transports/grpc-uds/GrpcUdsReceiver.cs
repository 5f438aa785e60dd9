using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using IpcBench.Transports.GrpcUds.Wire;

namespace IpcBench.Transports.GrpcUds;

/// <summary>
/// One subscriber's call to one publisher. A message is handed out in place as two segments, the header rebuilt from
/// the protobuf fields and then the payload bytes protobuf deserialized: the receiver verifies what gRPC delivered.
/// </summary>
internal sealed class GrpcUdsReceiver : IMessageReceiver, IDisposable
{
    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(10);

    private readonly GrpcChannel _channel;
    private readonly IDisposable _call;
    private readonly IAsyncStreamReader<BenchMessage> _messages;
    private readonly IClientStreamWriter<BenchMessage>? _echoes;
    private readonly CancellationTokenSource _closing = new();
    private readonly byte[] _header = new byte[MessageHeader.Size];
    private byte[] _contiguous = [];
    private BenchMessage? _current;
    private bool _payloadHandedOut;

    public GrpcUdsReceiver(PublisherAddress publisher, SubscriberOptions options, CancellationToken cancellationToken)
    {
        PublisherIndexes = [publisher.PublisherIndex];
        _channel = GrpcCalls.UnixSocketChannel(publisher.Address, options.MaxMessageBytes + GrpcUdsPublisher.WireOverheadBytes);
        var client = new BenchStream.BenchStreamClient(_channel);
        Task<Metadata> headers;
        if (options.RoundTrip)
        {
            var metadata = new Metadata { { GrpcUdsTransport.SubscriberIndexHeader, options.SubscriberIndex.ToString(System.Globalization.CultureInfo.InvariantCulture) } };
            var call = client.Exchange(metadata, cancellationToken: _closing.Token);
            (_call, _messages, _echoes, headers) = (call, call.ResponseStream, call.RequestStream, call.ResponseHeadersAsync);
        }
        else
        {
            var call = client.Subscribe(new SubscribeRequest { SubscriberIndex = options.SubscriberIndex }, cancellationToken: _closing.Token);
            (_call, _messages, headers) = (call, call.ResponseStream, call.ResponseHeadersAsync);
        }

        try
        {
            // The publisher sends headers once it has registered this stream: from then on it receives every message.
            headers.WaitAsync(ConnectTimeout, cancellationToken).GetAwaiter().GetResult();
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    public IReadOnlyList<int> PublisherIndexes { get; }

    public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken)
    {
        if (!GrpcCalls.MoveNext(_messages, cancellationToken))
        {
            segment = default;
            messageLength = 0;
            return false;
        }

        _current = _messages.Current;
        _payloadHandedOut = false;
        WireMessages.WriteHeader(_current, _header);
        segment = _header;
        messageLength = MessageHeader.MessageBytes(_current.Payload.Length);
        return true;
    }

    public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken)
    {
        if (_current is null || _payloadHandedOut || _current.Payload.IsEmpty)
        {
            segment = default;
            return false;
        }

        _payloadHandedOut = true;
        segment = _current.Payload.Span;
        return true;
    }

    /// <summary>The whole message in one span, for callers that want it so: costs a copy the segments avoid.</summary>
    public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken)
    {
        if (!TryReceiveFirstSegment(out var header, out int length, cancellationToken))
        {
            message = default;
            return false;
        }

        if (_contiguous.Length < length)
        {
            _contiguous = GC.AllocateUninitializedArray<byte>(length);
        }

        header.CopyTo(_contiguous);
        _current!.Payload.Span.CopyTo(_contiguous.AsSpan(MessageHeader.Size));
        message = _contiguous.AsSpan(0, length);
        return true;
    }

    public void Reply(ReadOnlySpan<byte> message)
    {
        var echo = WireMessages.FromHeader(MessageHeader.Read(message), ByteString.Empty);
        (_echoes ?? throw new InvalidOperationException("Reply outside round trip.")).WriteAsync(echo).GetAwaiter().GetResult();
    }

    public void Release()
    {
        _current = null;
    }

    public void Dispose()
    {
        _closing.Cancel();
        _call.Dispose();
        _channel.Dispose();
        _closing.Dispose();
    }

    public void Run(IReceiverLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IReceiverPath"/>): the rebuilt header, then the payload where it lies.</summary>
    private readonly struct HotPath(GrpcUdsReceiver receiver) : IReceiverPath
    {
        public bool Segmented => true;

        public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken) =>
            receiver.TryReceiveFirstSegment(out segment, out messageLength, cancellationToken);

        public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken) =>
            receiver.TryReceiveNextSegment(out segment, cancellationToken);

        public void Reply(ReadOnlySpan<byte> message) => receiver.Reply(message);

        public void Release() => receiver.Release();
    }
}
