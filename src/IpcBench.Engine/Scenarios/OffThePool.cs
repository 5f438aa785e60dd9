namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// A scenario's blocking steps (joining its publisher threads, closing endpoints, the pinned spinning probe) on a thread
/// of their own. On the thread pool each held one of the two workers a 2-core machine starts with, and when a few
/// scenarios ended at once the others' window timers and grpc-uds's stream pumps waited for the pool to grow: a paced
/// grpc-uds publisher beside them lagged 130–190 ms in half the runs and once delivered 1,725 of 2,000 msg/s.
/// </summary>
internal static class OffThePool
{
    public static Task RunAsync(Action work) =>
        Task.Factory.StartNew(work, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    public static Task<T> RunAsync<T>(Func<T> work) =>
        Task.Factory.StartNew(work, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
}
