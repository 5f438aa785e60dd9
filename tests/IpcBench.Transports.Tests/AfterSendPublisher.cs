using IpcBench.Transports;

namespace IpcBench.Transports.Tests;

/// <summary>
/// A publisher endpoint that calls <paramref name="afterSend"/> after each message the worker's loop sends, on the
/// inner transport's own path, wrapped: the loop stays statically dispatched over it. For tests that act at a message
/// count (read allocations, open the measurement window).
/// </summary>
internal sealed class AfterSendPublisher(IPublisherEndpoint inner, Action afterSend) : IPublisherEndpoint
{
    public string Address => inner.Address;

    public void WaitForSubscribers(int count, TimeSpan timeout, CancellationToken cancellationToken) => inner.WaitForSubscribers(count, timeout, cancellationToken);

    public Span<byte> Loan(int length) => inner.Loan(length);

    public void Send() => inner.Send();

    public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) => inner.TryReceiveReply(out reply, cancellationToken);

    public void ReleaseReply() => inner.ReleaseReply();

    public void Run(IPublisherLoop loop) => inner.Run(new Wrapping(loop, afterSend));

    public void Dispose() => inner.Dispose();

    private sealed class Wrapping(IPublisherLoop loop, Action afterSend) : IPublisherLoop
    {
        public void Run<TInner>(TInner path)
            where TInner : struct, IPublisherPath => loop.Run(new Path<TInner>(path, afterSend));
    }

    private readonly struct Path<TInner>(TInner inner, Action afterSend) : IPublisherPath
        where TInner : struct, IPublisherPath
    {
        public bool Segmented => inner.Segmented;

        public bool FirstSegmentWritableUntilSend => inner.FirstSegmentWritableUntilSend;

        public Span<byte> LoanFirstSegment(int length) => inner.LoanFirstSegment(length);

        public Span<byte> LoanNextSegment() => inner.LoanNextSegment();

        public void Send()
        {
            inner.Send();
            afterSend();
        }

        public bool TryReceiveReply(out ReadOnlySpan<byte> reply, CancellationToken cancellationToken) => inner.TryReceiveReply(out reply, cancellationToken);

        public void ReleaseReply() => inner.ReleaseReply();
    }
}
