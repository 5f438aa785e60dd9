namespace IpcBench.Transports;

/// <summary>What a polling loop does between two empty polls, per <see cref="WaitMode"/>.</summary>
public static class Idle
{
    public static void Pause(WaitMode mode)
    {
        if (mode == WaitMode.Spin)
        {
            // A few PAUSE instructions: stays on the core but lets the sibling hyper-thread and the bus breathe.
            Thread.SpinWait(8);
        }
        else
        {
            Thread.Yield();
        }
    }
}
