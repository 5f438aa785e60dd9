namespace IpcBench.Transports.Streams;

/// <summary>One bidirectional byte stream between a publisher and a subscriber.</summary>
public abstract class StreamLink : IDisposable
{
    /// <summary>Reads at least one byte, waiting per the link's wait mode. 0 when the link closed or was cancelled.</summary>
    public abstract int Receive(Span<byte> buffer, CancellationToken cancellationToken);

    /// <summary>Writes all of <paramref name="data"/>, waiting while the peer is full. Throws when the peer is gone.</summary>
    public abstract void Send(ReadOnlySpan<byte> data);

    public abstract void Dispose();
}

/// <summary>The accepting side of a publisher.</summary>
public interface IStreamListener : IDisposable
{
    string Address { get; }

    StreamLink Accept(TimeSpan timeout, CancellationToken cancellationToken);
}
