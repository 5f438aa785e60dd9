namespace IpcBench.Transports.SharedMemory;

/// <summary>Lets Dispose, on another thread, unmap a ring only once the thread using it has left the mapping.</summary>
internal static class Quiescence
{
    /// <summary>Waits until <paramref name="inside"/> is 0 or names the calling thread.</summary>
    public static bool WaitUntilOutside(ref int inside, TimeSpan timeout)
    {
        int self = Environment.CurrentManagedThreadId;
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        var spinner = new SpinWait();
        while (true)
        {
            int owner = Volatile.Read(ref inside);
            if (owner == 0 || owner == self)
            {
                return true;
            }

            if (Environment.TickCount64 >= deadline)
            {
                return false;
            }

            spinner.SpinOnce(sleep1Threshold: 20);
        }
    }
}
