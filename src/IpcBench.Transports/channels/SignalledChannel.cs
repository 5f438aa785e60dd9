using System.Threading.Channels;

namespace IpcBench.Transports.Channels;

/// <summary>
/// A bounded System.Threading.Channels channel of messages, with a <see cref="Doorbell"/> for each side a BLOCK-mode
/// thread can wait on: the channel carries every message; the doorbells only wake threads. Both ends of a channel
/// wait the same way (the scenario's wait strategy): only a BLOCK-mode side rings, because only one can be asleep.
/// A sleeping reader is woken by the first message; a sleeping writer only once the reader has drained a quarter of
/// the capacity, as a pipe wakes its writer when a page is free: woken for each freed slot, a writer writes one message
/// and sleeps again, trading a wake-up per message with the reader.
/// </summary>
internal sealed class SignalledChannel
{
    private readonly Channel<PooledMessage> _channel;

    /// <summary>The reader sleeps on it until there is a message; the writer rings it.</summary>
    private readonly Doorbell _readable = new();

    /// <summary>The writer sleeps on it until there is room; the reader rings it.</summary>
    private readonly Doorbell _writable = new();

    /// <summary>After this many reads since it found the writer asleep, the reader wakes it.</summary>
    private readonly int _wakeWriterAfter;

    /// <summary>The reader's count of its reads since it found the writer asleep (the writer slept on a full channel).</summary>
    private int _readsWhileWriterSleeps;

    private volatile bool _completed;

    public SignalledChannel(int capacity)
    {
        _wakeWriterAfter = Math.Max(1, capacity / 4);

        // Single reader and writer, the one thread on either side; no continuations are ever registered (the doorbells
        // wake threads), so none can run inline or on the thread pool.
        _channel = Channel.CreateBounded<PooledMessage>(
            new BoundedChannelOptions(capacity) { SingleReader = true, SingleWriter = true, FullMode = BoundedChannelFullMode.Wait });

        // A bounded channel's queue grows by doubling the first time it fills: filled once here, it never grows (and
        // allocates) inside a measured loop.
        var primer = new PooledMessage([]);
        while (_channel.Writer.TryWrite(primer))
        {
        }

        while (_channel.Reader.TryRead(out _))
        {
        }
    }

    /// <summary>The next message; false once the channel is completed and empty or <paramref name="cancellationToken"/> fired.</summary>
    public bool TryRead(WaitMode mode, CancellationToken cancellationToken, out PooledMessage message)
    {
        var reader = _channel.Reader;
        var spinner = default(SpinWait);
        while (!reader.TryRead(out message!))
        {
            if (reader.Completion.IsCompleted || cancellationToken.IsCancellationRequested)
            {
                return false;
            }

            if (mode == WaitMode.Block && _writable.IsArmed)
            {
                // Empty with the writer asleep cannot follow a full channel's drain (that rang it), but a spare
                // look costs nothing on this path and two sleepers would otherwise wait for their poll.
                _readsWhileWriterSleeps = 0;
                _writable.Ring();
            }

            if (mode != WaitMode.Block)
            {
                Idle.Pause(mode);
                continue;
            }

            if (Doorbell.SpinFirst(ref spinner))
            {
                continue;
            }

            _readable.Arm();
            if (reader.TryRead(out message!))
            {
                _readable.Disarm();
                break;
            }

            if (reader.Completion.IsCompleted || cancellationToken.IsCancellationRequested)
            {
                _readable.Disarm();
                return false;
            }

            _readable.Sleep();
        }

        if (mode == WaitMode.Block)
        {
            WakeWriterOnceDrained();
        }

        return true;
    }

    /// <summary>
    /// The writer sleeps only on a full channel (it arms, then finds it still full under the channel's lock), so every
    /// read that sees it armed took a message from a channel that had been full since: after a quarter of the capacity of such
    /// reads, that much of the channel is free. Counted by the reader rather than read from the channel's Count, which
    /// takes the channel's lock a second time per read.
    /// </summary>
    private void WakeWriterOnceDrained()
    {
        if (!_writable.IsArmed)
        {
            // Written only when it changes: this object's other fields are read by the writer for every message.
            if (_readsWhileWriterSleeps != 0)
            {
                _readsWhileWriterSleeps = 0;
            }
        }
        else if (++_readsWhileWriterSleeps >= _wakeWriterAfter)
        {
            _readsWhileWriterSleeps = 0;
            _writable.Ring();
        }
    }

    /// <summary>Writes <paramref name="message"/>, waiting for room; throws once the channel is completed (its reader is gone).</summary>
    public void Write(PooledMessage message, WaitMode mode)
    {
        var writer = _channel.Writer;
        while (!writer.TryWrite(message))
        {
            if (_completed)
            {
                throw new IOException("The subscriber is gone.");
            }

            if (mode != WaitMode.Block)
            {
                Idle.Pause(mode);
                continue;
            }

            _writable.Arm();
            if (writer.TryWrite(message))
            {
                _writable.Disarm();
                break;
            }

            _writable.Sleep();
        }

        if (mode == WaitMode.Block)
        {
            _readable.Ring();
        }
    }

    /// <summary>No more messages; a thread asleep on either side wakes now rather than at its next poll.</summary>
    public void Complete()
    {
        _completed = true;
        _channel.Writer.TryComplete();
        _readable.Ring();
        _writable.Ring();
    }
}
