using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using IpcBench.Iceoryx2;

namespace IpcBench.Transports.Iceoryx2;

/// <summary>
/// One publisher: its own iceoryx2 node and publisher port on the scenario's data service; under BLOCK a notifier on
/// the data service's event service; under ROUND_TRIP a subscriber port on its reply service (and under BLOCK a listener
/// on the reply's event service). <see cref="Loan"/> hands out the shared-memory sample itself.
/// </summary>
internal sealed unsafe class Iceoryx2PublisherEndpoint : IPublisherEndpoint
{
    private readonly PortGate _gate;
    private readonly Iceoryx2Settings _settings;
    private readonly WaitMode _waitMode;
    private readonly int _expectedSubscribers;
    private readonly int _publisherIndex;
    private readonly int _maxMessageBytes;
    private readonly bool _roundTrip;
    private Iceoryx2Node? _node;
    private Iceoryx2Publisher? _publisher;
    private Iceoryx2Notifier? _notifier;
    private Iceoryx2Subscriber? _replies;
    private Iceoryx2Listener? _replyListener;
    private ulong _loan;
    private int _loanLength;

    // Send loans the next sample (same length) in its own native call, so a publisher loop makes one call per message.
    private ulong _nextLoan;
    private byte* _nextLoanData;
    private readonly SampleBatch _replyBatch = new(1);
    private long _sent;

    public Iceoryx2PublisherEndpoint(PublisherOptions options, Iceoryx2Settings settings)
    {
        _gate = new PortGate(FreePorts);
        _settings = settings;
        _waitMode = options.WaitMode;
        _expectedSubscribers = options.ExpectedSubscribers;
        _publisherIndex = options.PublisherIndex;
        _maxMessageBytes = options.MaxMessageBytes;
        _roundTrip = options.RoundTrip;
        bool shared = ServiceLayout.IsShared(options);
        Address = ServiceLayout.DataService(options, shared);
        var dataOptions = ServiceLayout.DataOptions(options, settings, out long bytesPerPublisher);
        ServiceLayout.EnsureSharedMemoryFits(options, bytesPerPublisher, settings);
        try
        {
            _node = Iceoryx2Calls.Create(() => Iceoryx2Node.Create(ServiceLayout.NodeName(options.ScenarioKey, $"pub{options.PublisherIndex}")), "node");
            var node = _node;
            if (options.RoundTrip)
            {
                // Before the data port: once subscribers see this publisher, its echo service must exist.
                string reply = ServiceLayout.ReplyService(Address, options.PublisherIndex);
                if (options.WaitMode == WaitMode.Block)
                {
                    _replyListener = Iceoryx2Calls.Create(
                        () => node.CreateListener(ServiceLayout.ReplyEventService(Address, options.PublisherIndex), ServiceLayout.ReplyEventOptions(options)),
                        $"the listener of reply event service '{ServiceLayout.ReplyEventService(Address, options.PublisherIndex)}'");
                }

                _replies = Iceoryx2Calls.Create(() => node.CreateSubscriber(reply, ServiceLayout.ReplyOptions(options, settings)), $"the subscriber of reply service '{reply}'");
            }

            if (options.WaitMode == WaitMode.Block)
            {
                string events = ServiceLayout.EventService(Address);
                _notifier = Iceoryx2Calls.Create(() => node.CreateNotifier(events, ServiceLayout.DataEventOptions(options)), $"the notifier of event service '{events}'");
            }

            _publisher = Iceoryx2Calls.Create(() => node.CreatePublisher(Address, dataOptions), $"publisher {options.PublisherIndex} on service '{Address}'");
        }
        catch
        {
            FreePorts();
            throw;
        }
    }

    public string Address { get; }

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (!_gate.TryEnter())
        {
            throw Closed();
        }

        try
        {
            var clock = Stopwatch.StartNew();
            var publisher = _publisher!;
            WaitUntil(s => publisher.WaitForSubscribers(count, s), timeout, clock, cancellationToken,
                () => $"only {publisher.GetServiceInfo().Subscribers} of {count} subscribers attached to iceoryx2 service '{Address}'");
            if (_replies is { } replies)
            {
                WaitUntil(s => replies.WaitForPublishers(count, s), timeout, clock, cancellationToken,
                    () => $"only {replies.GetServiceInfo().Publishers} of {count} subscribers attached their echo publishers to '{replies.ServiceName}'");
            }

            if (_notifier is { } notifier)
            {
                // Subscribers create their listener before their data port, so this is normally true already.
                WaitUntil(_ => notifier.ListenerCount >= count || Pause(), timeout, clock, cancellationToken,
                    () => $"only {notifier.ListenerCount} of {count} subscribers listen on '{notifier.ServiceName}'");
            }
        }
        finally
        {
            Exit();
        }
    }

    public Span<byte> Loan(int length)
    {
        if (!_gate.TryEnter())
        {
            throw Closed();
        }

        try
        {
            if (_nextLoan != 0)
            {
                if (_loanLength == length)
                {
                    _loan = _nextLoan;
                    _nextLoan = 0;
                    return new Span<byte>(_nextLoanData, length);
                }

                // Another length (the end-of-stream message): give it back.
                ulong stale = _nextLoan;
                _nextLoan = 0;
                _publisher!.Discard(stale);
            }

            _loanLength = length;
            return _publisher!.Loan(length, out _loan);
        }
        catch (Iceoryx2Exception e)
        {
            Exit();
            if (e.ErrorCode == Iceoryx2ErrorCode.PayloadTooLarge)
            {
                throw new ArgumentOutOfRangeException(nameof(length), length,
                    $"iceoryx2: a {length}-byte message does not fit service '{Address}' ({_maxMessageBytes} bytes at most): {e.Message}");
            }

            throw new IOException($"iceoryx2: publisher {_publisherIndex} cannot loan a sample on '{Address}': {e.Message}", e);
        }
        catch
        {
            Exit();
            throw;
        }
    }

    public void Send()
    {
        try
        {
            int receivers;
            try
            {
                receivers = _publisher!.SendAndLoan(_loan, _loanLength, out _nextLoan, out var next);
                _nextLoanData = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetReference(next));
            }
            catch (Iceoryx2Exception e) when (e.ErrorCode == Iceoryx2ErrorCode.DeliveryTimeout)
            {
                throw new IOException(string.Create(CultureInfo.InvariantCulture,
                    $"iceoryx2: a subscriber of '{Address}' took no message for {_settings.SendTimeout.TotalSeconds:0.#} s (is its process still alive?): {e.Message}"), e);
            }
            catch (Iceoryx2Exception e)
            {
                throw new IOException($"iceoryx2: publisher {_publisherIndex} cannot send on '{Address}': {e.Message}", e);
            }

            _sent++;
            if (receivers < _expectedSubscribers)
            {
                throw new IOException(string.Create(CultureInfo.InvariantCulture,
                    $"iceoryx2: message {_sent} of publisher {_publisherIndex} reached {receivers} of {_expectedSubscribers} subscribers of '{Address}': a subscriber left"));
            }

            // iceoryx2 coalesces: only the first notification after a listener woke costs a system call.
            _notifier?.Notify();
        }
        finally
        {
            Exit();
        }
    }

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken)
    {
        if (!_roundTrip)
        {
            throw new InvalidOperationException($"iceoryx2 publisher on '{Address}' was not created for round trips");
        }

        if (!_gate.TryEnter())
        {
            reply = default;
            return false;
        }

        var replies = _replies!;
        try
        {
            if (SampleWait.Next(replies, _replyBatch, out reply, _replyListener, _waitMode, _settings.BlockWaitSlice, _gate, cancellationToken))
            {
                return true; // The gate stays held until ReleaseReply: the span points into shared memory.
            }
        }
        catch (Iceoryx2Exception e)
        {
            Exit();
            throw new IOException($"iceoryx2: publisher {_publisherIndex} cannot receive echoes on '{replies.ServiceName}': {e.Message}", e);
        }
        catch
        {
            Exit();
            throw;
        }

        Exit();
        reply = default;
        return false;
    }

    public void ReleaseReply()
    {
        // The sample itself is released by the call that takes the next one, or when the port goes.
        Exit();
    }

    public void Dispose() => _gate.Close();

    private void Exit() => _gate.Exit();

    private void FreePorts()
    {
        _notifier?.Dispose();
        _notifier = null;
        _replyListener?.Dispose();
        _replyListener = null;
        _replies?.Dispose();
        _replies = null;
        _publisher?.Dispose();
        _publisher = null;
        _node?.Dispose();
        _node = null;
    }

    private ObjectDisposedException Closed() => new(nameof(Iceoryx2PublisherEndpoint), $"iceoryx2 publisher {_publisherIndex} on '{Address}' is disposed");

    private void WaitUntil(Func<TimeSpan, bool> condition, TimeSpan timeout, Stopwatch clock, CancellationToken cancellationToken, Func<string> describe)
    {
        var slice = TimeSpan.FromMilliseconds(50);
        while (!condition(slice))
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_gate.IsClosing)
            {
                throw Closed();
            }

            if (clock.Elapsed >= timeout)
            {
                throw new TimeoutException(string.Create(CultureInfo.InvariantCulture, $"{describe()} within {timeout.TotalSeconds:0.#} s."));
            }
        }
    }

    private static bool Pause()
    {
        Thread.Sleep(1);
        return false;
    }

    public void Run(IPublisherLoop loop) => loop.Run(new HotPath(this));

    /// <summary>The static-dispatch adapter (see <see cref="IPublisherPath"/>): whole messages, one segment each.</summary>
    private readonly struct HotPath(Iceoryx2PublisherEndpoint endpoint) : IPublisherPath
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

/// <summary>Turns a failure to create an iceoryx2 object into an error that says what could not be created.</summary>
internal static class Iceoryx2Calls
{
    public static T Create<T>(Func<T> create, string what)
    {
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                return create();
            }
            catch (Iceoryx2Exception e) when (e.ErrorCode == Iceoryx2ErrorCode.ServiceOpenFailed && attempt < 5)
            {
                // Another process is creating or removing the same service right now: iceoryx2 says retry.
                Thread.Sleep(20 * attempt);
            }
            catch (Iceoryx2Exception e)
            {
                throw new IOException($"iceoryx2: cannot create {what}: {e.Message}", e);
            }
        }
    }
}
