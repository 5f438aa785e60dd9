using System.Runtime.Intrinsics.Arm;
using System.Runtime.Intrinsics.X86;

namespace IpcBench.Transports;

/// <summary>What a polling loop does between two empty polls, per <see cref="WaitMode"/>.</summary>
public static class Idle
{
    private const int SpinPauses = 8;

    public static void Pause(WaitMode mode)
    {
        if (mode == WaitMode.Spin)
        {
            Spin();
        }
        else
        {
            Thread.Yield();
        }
    }

    /// <summary>
    /// A few PAUSE instructions, exactly what bench/native's spin does: stays on the core but lets the sibling
    /// hyper-thread and the bus breathe. Not <see cref="Thread.SpinWait"/>, whose iterations the runtime calibrates to
    /// tens of nanoseconds each: a longer gap between polls than the native reference's, which would make the spin
    /// figures compare two different strategies.
    /// </summary>
    private static void Spin()
    {
        for (int i = 0; i < SpinPauses; i++)
        {
            if (X86Base.IsSupported)
            {
                X86Base.Pause();
            }
            else if (ArmBase.IsSupported)
            {
                ArmBase.Yield();
            }
            else
            {
                Thread.SpinWait(1);
            }
        }
    }
}
