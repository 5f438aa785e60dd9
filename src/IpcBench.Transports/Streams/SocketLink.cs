using System.Net.Sockets;

namespace IpcBench.Transports.Streams;

/// <summary>
/// A connected stream socket. BLOCK uses a blocking socket (the thread sleeps in recv/send); SPIN and YIELD switch it
/// to non-blocking and poll, so the waiting thread never enters the kernel's wait queue.
/// </summary>
public sealed class SocketLink : StreamLink
{
    private readonly Socket _socket;
    private readonly WaitMode _waitMode;

    public SocketLink(Socket socket, WaitMode waitMode)
    {
        _socket = socket;
        _waitMode = waitMode;
        _socket.Blocking = waitMode == WaitMode.Block;
        if (socket.ProtocolType == ProtocolType.Tcp)
        {
            // One message per write must leave at once: Nagle would batch small messages and distort latency.
            _socket.NoDelay = true;
        }
    }

    public override int Receive(Span<byte> buffer, CancellationToken cancellationToken)
    {
        while (true)
        {
            int received;
            SocketError error;
            try
            {
                received = _socket.Receive(buffer, SocketFlags.None, out error);
            }
            catch (ObjectDisposedException)
            {
                return 0;
            }

            if (error == SocketError.Success)
            {
                return received;
            }

            if (error != SocketError.WouldBlock || cancellationToken.IsCancellationRequested)
            {
                return 0;
            }

            Idle.Pause(_waitMode);
        }
    }

    public override void Send(ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty)
        {
            int sent;
            SocketError error;
            try
            {
                sent = _socket.Send(data, SocketFlags.None, out error);
            }
            catch (ObjectDisposedException)
            {
                throw new IOException("The link was closed locally.");
            }

            if (error == SocketError.Success)
            {
                data = data[sent..];
            }
            else if (error == SocketError.WouldBlock)
            {
                Idle.Pause(_waitMode);
            }
            else
            {
                throw new IOException($"The peer is gone ({error}).");
            }
        }
    }

    public override void Dispose()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // Already disconnected; closing below is all that is left to do.
        }
        catch (ObjectDisposedException)
        {
        }

        _socket.Dispose();
    }
}

/// <summary>A listening socket whose accepted connections become <see cref="SocketLink"/>s.</summary>
public sealed class SocketListener(Socket socket, string address, WaitMode waitMode, Action? onDispose = null) : IStreamListener
{
    public string Address { get; } = address;

    public StreamLink Accept(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        try
        {
            var accepted = socket.AcceptAsync(deadline.Token).AsTask().GetAwaiter().GetResult();
            return new SocketLink(accepted, waitMode);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"No subscriber connected to {Address} within {timeout.TotalSeconds:0.#} s.");
        }
    }

    public void Dispose()
    {
        socket.Dispose();
        onDispose?.Invoke();
    }
}
