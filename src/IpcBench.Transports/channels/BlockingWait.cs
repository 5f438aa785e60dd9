namespace IpcBench.Transports.Channels;

/// <summary>
/// Blocks one hot-loop thread on a channel's pending <see cref="ValueTask{TResult}"/> without allocating: no
/// <c>AsTask()</c> (a Task per wait), no registration on the caller's token. A pending ValueTask may be blocked on only
/// through a continuation, so the continuation releases a semaphore and the thread waits on it. Made with its link or
/// publisher, so nothing is created lazily inside a measured loop.
/// </summary>
internal sealed class BlockingWait
{
    /// <summary>How often a blocked thread looks at its token: the stop of a BLOCK scenario waits this long at most.</summary>
    private static readonly TimeSpan CancellationPoll = TimeSpan.FromMilliseconds(20);

    private readonly SemaphoreSlim _signal = new(0);
    private readonly Action _release;

    public BlockingWait() => _release = () => _signal.Release();

    /// <summary>The result of <paramref name="pending"/>; false as well when <paramref name="cancellationToken"/> fired first.</summary>
    public bool Until(ValueTask<bool> pending, CancellationToken cancellationToken)
    {
        if (!pending.IsCompleted)
        {
            pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_release);
            while (!pending.IsCompleted)
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    // Abandoned: the thread is leaving its loop.
                    return false;
                }

                // A release left over from an earlier wait only costs one more look at this operation.
                _signal.Wait(CancellationPoll);
            }
        }

        return pending.GetAwaiter().GetResult();
    }
}
