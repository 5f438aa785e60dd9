namespace IpcBench.Transports.Channels;

/// <summary>
/// Blocks a hot-loop thread on a channel's pending <see cref="ValueTask{TResult}"/> without allocating: no
/// <c>AsTask()</c> (a Task per wait), no registration on the caller's token. A pending ValueTask may be blocked on only
/// through a continuation, so the continuation sets an event of this thread's and the thread waits on the event.
/// </summary>
internal static class BlockingWait
{
    /// <summary>How often a blocked thread looks at its token: the stop of a BLOCK scenario waits this long at most.</summary>
    private static readonly TimeSpan CancellationPoll = TimeSpan.FromMilliseconds(20);

    [ThreadStatic]
    private static ManualResetEventSlim? t_completed;

    [ThreadStatic]
    private static Action? t_signal;

    /// <summary>The result of <paramref name="pending"/>; false as well when <paramref name="cancellationToken"/> fired first.</summary>
    public static bool Until(ValueTask<bool> pending, CancellationToken cancellationToken)
    {
        if (!pending.IsCompleted)
        {
            var completed = t_completed ??= new ManualResetEventSlim(false);
            var signal = t_signal ??= completed.Set;
            completed.Reset();
            pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(signal);
            while (!pending.IsCompleted)
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    // Abandoned: the thread is leaving its loop. A late signal from this wait is harmless (the next
                    // wait resets the event and re-checks its own operation before trusting a wake-up).
                    return false;
                }

                completed.Wait(CancellationPoll);
                completed.Reset();
            }
        }

        return pending.GetAwaiter().GetResult();
    }
}
