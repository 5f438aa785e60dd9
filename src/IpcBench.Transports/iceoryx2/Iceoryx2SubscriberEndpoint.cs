using System.Diagnostics;
using System.Globalization;
using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>One subscriber: a receiver per data service it reads (one under ALL_TO_ALL, however many publishers).</summary>
internal sealed class Iceoryx2SubscriberEndpoint(List<Iceoryx2Receiver> receivers) : ISubscriberEndpoint
{
    public IReadOnlyList<IMessageReceiver> Receivers => receivers;

    public static Iceoryx2SubscriberEndpoint Connect(SubscriberOptions options, Iceoryx2Settings settings, CancellationToken cancellationToken)
    {
        var receivers = new List<Iceoryx2Receiver>();
        try
        {
            foreach (var service in options.Publishers.GroupBy(p => p.Address, StringComparer.Ordinal))
            {
                cancellationToken.ThrowIfCancellationRequested();
                receivers.Add(new Iceoryx2Receiver(options, service.Key, [.. service.Select(p => p.PublisherIndex)], settings, cancellationToken));
            }
        }
        catch
        {
            receivers.ForEach(r => r.Dispose());
            throw;
        }

        return new Iceoryx2SubscriberEndpoint(receivers);
    }

    public void Dispose() => receivers.ForEach(r => r.Dispose());
}

/// <summary>
/// One subscriber port (on its own node) receiving from every publisher of one data service. Under BLOCK it sleeps on a
/// listener of the service's event service; under ROUND_TRIP it owns one echo publisher per publisher it hears.
/// Messages are read in place: the span handed out is the shared-memory sample.
/// </summary>
internal sealed class Iceoryx2Receiver : IMessageReceiver, IDisposable
{
    private readonly PortGate _gate;
    private readonly Iceoryx2Settings _settings;
    private readonly WaitMode _waitMode;
    private readonly int _subscriberIndex;
    private readonly string _service;
    private Iceoryx2Node? _node;
    private Iceoryx2Subscriber? _subscriber;
    private Iceoryx2Listener? _listener;
    private EchoLink?[] _echoes = [];
    private SampleBatch _batch = new(1);

    public Iceoryx2Receiver(SubscriberOptions options, string service, int[] publisherIndexes, Iceoryx2Settings settings, CancellationToken cancellationToken)
    {
        _gate = new PortGate(FreePorts);
        _settings = settings;
        _waitMode = options.WaitMode;
        _subscriberIndex = options.SubscriberIndex;
        _service = service;
        PublisherIndexes = publisherIndexes;
        try
        {
            _node = Iceoryx2Calls.Create(() => Iceoryx2Node.Create(ServiceLayout.NodeName(options.ScenarioKey, $"sub{options.SubscriberIndex}")), "node");
            var node = _node;
            if (options.RoundTrip)
            {
                _echoes = new EchoLink?[Math.Max(options.TotalPublishers, publisherIndexes.Max() + 1)];
                var echoOptions = ServiceLayout.OpenOptions(MessageHeader.Size, settings);
                foreach (int p in publisherIndexes)
                {
                    string reply = ServiceLayout.ReplyService(service, p);
                    var publisher = Iceoryx2Calls.Create(() => node.CreatePublisher(reply, echoOptions), $"the echo publisher on '{reply}'");
                    var link = new EchoLink(publisher, null);
                    _echoes[p] = link;
                    if (options.WaitMode == WaitMode.Block)
                    {
                        string events = ServiceLayout.ReplyEventService(service, p);
                        _echoes[p] = link with { Notifier = Iceoryx2Calls.Create(() => node.CreateNotifier(events), $"the echo notifier on '{events}'") };
                    }
                }
            }

            if (options.WaitMode == WaitMode.Block)
            {
                // Before the data port: a publisher that sees this subscriber must find its listener too.
                string events = ServiceLayout.EventService(service);
                _listener = Iceoryx2Calls.Create(() => node.CreateListener(events), $"the listener on '{events}'");
            }

            _subscriber = Iceoryx2Calls.Create(() => node.CreateSubscriber(service, ServiceLayout.OpenOptions(options.MaxMessageBytes, settings)),
                $"subscriber {options.SubscriberIndex} on service '{service}'");
            // The publishers sized the service, its borrow limit included: that is the batch this receiver can take.
            _batch = new SampleBatch((int)Math.Min(_subscriber.GetServiceInfo().SubscriberMaxBorrowedSamples, ServiceLayout.MaxReceiveBatch));
            Handshake(publisherIndexes.Length, cancellationToken);
        }
        catch
        {
            FreePorts();
            throw;
        }
    }

    public IReadOnlyList<int> PublisherIndexes { get; }

    public bool TryReceive(out ReadOnlySpan<byte> message, CancellationToken cancellationToken)
    {
        if (!_gate.TryEnter())
        {
            message = default;
            return false;
        }

        var subscriber = _subscriber!;
        try
        {
            if (SampleWait.Next(subscriber, _batch, out message, _listener, _waitMode, _settings.BlockWaitSlice, _gate, cancellationToken))
            {
                return true; // The gate stays held until Release: the span points into shared memory.
            }
        }
        catch (Iceoryx2Exception e)
        {
            Exit();
            throw new IOException($"iceoryx2: subscriber {_subscriberIndex} cannot receive on '{_service}': {e.Message}", e);
        }
        catch
        {
            Exit();
            throw;
        }

        Exit();
        message = default;
        return false;
    }

    public void Reply(ReadOnlySpan<byte> message)
    {
        var header = MessageHeader.Read(message);
        var link = header.PublisherIndex < _echoes.Length ? _echoes[header.PublisherIndex] : null;
        if (link is null)
        {
            throw new InvalidOperationException(string.Create(CultureInfo.InvariantCulture,
                $"iceoryx2 subscriber {_subscriberIndex} has no echo link to publisher {header.PublisherIndex} (not a round trip, or not its publisher)"));
        }

        int receivers;
        try
        {
            receivers = link.Publisher.SendCopy(message);
            link.Notifier?.Notify();
        }
        catch (Iceoryx2Exception e)
        {
            // The worker ends without Release: end the use here, or a Dispose meanwhile would never free the ports.
            Exit();
            throw new IOException($"iceoryx2: subscriber {_subscriberIndex} cannot echo to '{link.Publisher.ServiceName}': {e.Message}", e);
        }

        if (receivers == 0)
        {
            Exit();
            throw new IOException($"iceoryx2: subscriber {_subscriberIndex} echoed to '{link.Publisher.ServiceName}' but its publisher is gone");
        }
    }

    public void Release()
    {
        // The sample itself is released with its batch by the call that takes the next batch, or when the port goes.
        Exit();
    }

    public void Dispose() => _gate.Close();

    private void Exit() => _gate.Exit();

    /// <summary>
    /// Waits until every expected publisher is on the service and connects to them, and connects every echo publisher
    /// to its publisher's echo subscriber: nothing sent afterwards is dropped for want of a connection.
    /// </summary>
    private void Handshake(int publishers, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        var slice = TimeSpan.FromMilliseconds(50);
        var subscriber = _subscriber!;
        while (!subscriber.WaitForPublishers(publishers, slice))
        {
            ThrowIfLate(clock, cancellationToken, () => $"only {subscriber.GetServiceInfo().Publishers} of {publishers} publishers are on iceoryx2 service '{_service}'");
        }

        foreach (var link in _echoes)
        {
            if (link is null)
            {
                continue;
            }

            while (!link.Publisher.WaitForSubscribers(1, slice))
            {
                ThrowIfLate(clock, cancellationToken, () => $"the publisher's echo subscriber is not on '{link.Publisher.ServiceName}'");
            }
        }
    }

    private void ThrowIfLate(Stopwatch clock, CancellationToken cancellationToken, Func<string> describe)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if (clock.Elapsed >= _settings.ConnectTimeout)
        {
            throw new TimeoutException(string.Create(CultureInfo.InvariantCulture,
                $"iceoryx2 subscriber {_subscriberIndex}: {describe()} after {_settings.ConnectTimeout.TotalSeconds:0.#} s."));
        }
    }

    /// <summary>Every publisher left the service and nothing is left to read: the links are closed.</summary>
    private void FreePorts()
    {
        foreach (var link in _echoes)
        {
            link?.Notifier?.Dispose();
            link?.Publisher.Dispose();
        }

        _echoes = [];
        _listener?.Dispose();
        _listener = null;
        _subscriber?.Dispose();
        _subscriber = null;
        _node?.Dispose();
        _node = null;
    }

    private sealed record EchoLink(Iceoryx2Publisher Publisher, Iceoryx2Notifier? Notifier);

    public void Run(IReceiverLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IReceiverPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(Iceoryx2Receiver receiver) : IReceiverPath
    {
        public bool Segmented => false;

        public bool TryReceiveFirstSegment(out ReadOnlySpan<byte> segment, out int messageLength, CancellationToken cancellationToken)
        {
            bool received = receiver.TryReceive(out segment, cancellationToken);
            messageLength = segment.Length;
            return received;
        }

        public bool TryReceiveNextSegment(out ReadOnlySpan<byte> segment, CancellationToken cancellationToken)
        {
            segment = default;
            return false;
        }

        public void Reply(ReadOnlySpan<byte> message) => receiver.Reply(message);

        public void Release() => receiver.Release();
    }
}
