using System.Runtime.InteropServices;
using IpcBench.Workload.Placement;

namespace IpcBench.Workload;

/// <summary>
/// Bounces a cache line between two threads pinned to two cores and reports the median round trip. On these virtual
/// machines two vCPUs sometimes sit ~50 ns apart and sometimes ~450 ns, which moves every shared-memory figure ~4x, so
/// each result records it.
/// </summary>
public static class CoreToCoreProbe
{
    /// <summary>
    /// Two probes this many times apart were taken in different placements: well above one placement's own spread
    /// (70–150 ns near) and below the near/far distance (~4x). A comparison's probes split into classes at such a gap;
    /// the daemon's placement check uses it only until it has learned the machine's classes from its probe history.
    /// </summary>
    public const double PlacementGapRatio = 2;

    /// <summary>
    /// How many short probes one probe is the median of. One 30 ms probe spread over 51–173 ns within one placement on
    /// these hosts (issue 34): a transient (a vCPU descheduled, a sibling busy) moved its whole figure. The median of five
    /// short ones spaced a little apart needs three of them caught by the same transient.
    /// </summary>
    public const int ShortProbes = 5;

    /// <summary>The pause between short probes: long enough for a scheduler slice of someone else to end, short enough to be cheap.</summary>
    private static readonly TimeSpan ShortProbeGap = TimeSpan.FromMilliseconds(2);

    /// <summary>
    /// Spins (tens of µs, against round trips of 50–1,000 ns) after which a thread waiting for the other one yields its
    /// CPU at each further look: the other is off its CPU, waiting for it on a loaded machine, and until it is back the
    /// spinning only took a CPU from whoever was waiting for that one. A CPU-bound test run's probe threads took 155 of
    /// its 948 CPU-s before it (perf, 2026-11-29); an idle machine's probe never waits this long, so its figures do not
    /// change.
    /// </summary>
    private const int SpinsBeforeYield = 1 << 14;

    /// <param name="MedianRoundTripNs">The median of the short probes' round trips.</param>
    /// <param name="ShortProbeNs">Each short probe's own median round trip, in the order taken.</param>
    public sealed record Result(double MedianRoundTripNs, string Cores, IReadOnlyList<double> ShortProbeNs)
    {
        public double MinNs => ShortProbeNs.Count == 0 ? MedianRoundTripNs : ShortProbeNs.Min();

        public double MaxNs => ShortProbeNs.Count == 0 ? MedianRoundTripNs : ShortProbeNs.Max();
    }

    /// <summary>
    /// The round trip between CPUs <paramref name="coreA"/> and <paramref name="coreB"/>: a scenario probes the CPUs its
    /// publisher and subscriber were pinned to; unpinned ones probe 0 and 1, wherever the hypervisor put those. The
    /// median of <see cref="ShortProbes"/> short probes that together take <paramref name="duration"/> (plus a 2 ms gap
    /// between each). Null off Linux, on one core, for a CPU paired with itself, or when the machine is too busy to
    /// finish within 2 s (or 20x the duration). <see cref="Result.Cores"/> says "unpinned" when a CPU could not be taken
    /// (not in the process's allowed set).
    /// </summary>
    public static Result? Measure(TimeSpan duration, int coreA = 0, int coreB = 1)
    {
        if (!OperatingSystem.IsLinux() || Environment.ProcessorCount < 2 || coreA == coreB)
        {
            return null;
        }

        var probes = new double[ShortProbes];
        bool pinned = true;
        // On a loaded machine a pinned thread may wait whole scheduler slices for its core, and a scenario must not sit
        // in STARTING for a minute over a figure that would be meaningless anyway: give up, and report no probe.
        long giveUpAtNs = MonotonicClock.NowNs() + Math.Max(2_000_000_000L, duration.Ticks * 100 * 20);
        for (int i = 0; i < ShortProbes; i++)
        {
            if (i > 0)
            {
                Thread.Sleep(ShortProbeGap);
            }

            if (MeasureOnce(duration / ShortProbes, coreA, coreB, giveUpAtNs) is not { } once)
            {
                return null;
            }

            probes[i] = once.MedianNs;
            pinned &= once.Pinned;
        }

        var sorted = probes.Order().ToArray();
        return new Result(sorted[ShortProbes / 2], pinned ? $"{coreA}<->{coreB}" : "unpinned", probes);
    }

    /// <summary>One short probe: the median of its batches' round trips, and whether both threads sat on their CPUs.</summary>
    private static (double MedianNs, bool Pinned)? MeasureOnce(TimeSpan duration, int coreA, int coreB, long giveUpAtNs)
    {
        var line = new PaddedCounter();
        const int Batches = 5;
        var batchNs = new double[Batches];
        long batchBudgetNs = Math.Max(1_000_000, duration.Ticks * 100 / Batches);
        bool pinned = true;
        var ponger = new Thread(() =>
        {
            pinned &= PinCurrentThread(coreB);
            while (true)
            {
                long value;
                int spins = 0;
                while (((value = Volatile.Read(ref line.Value)) & 1) == 0)
                {
                    if (value < 0)
                    {
                        return;
                    }

                    if (++spins > SpinsBeforeYield)
                    {
                        Thread.Yield();
                    }
                }

                // Only the ping it read: a plain write could overwrite the stop signal written meanwhile (the prober gave
                // up while this thread waited for its core between read and write), and both threads would wait forever.
                Interlocked.CompareExchange(ref line.Value, value + 1, value);
            }
        })
        { IsBackground = true, Name = "core-probe-pong" };

        ponger.Start();
        var pinnedA = PinCurrentThreadTemporarily(coreA, out var restore);
        try
        {
            long value = 0;
            for (int batch = 0; batch < Batches; batch++)
            {
                long start = MonotonicClock.NowNs();
                long trips = 0;
                long now;
                do
                {
                    for (int i = 0; i < 64; i++)
                    {
                        Volatile.Write(ref line.Value, value + 1);
                        int spins = 0;
                        while (Volatile.Read(ref line.Value) != value + 2)
                        {
                            // Yielding, each look takes a system call: the clock is read every thousand of them.
                            if (++spins > SpinsBeforeYield)
                            {
                                Thread.Yield();
                                if ((spins & 1023) == 0 && MonotonicClock.NowNs() > giveUpAtNs)
                                {
                                    return null;
                                }
                            }
                        }

                        value += 2;
                    }

                    trips += 64;
                    now = MonotonicClock.NowNs();
                }
                while (now - start < batchBudgetNs);
                if (now > giveUpAtNs)
                {
                    return null;
                }

                batchNs[batch] = (double)(now - start) / trips;
            }
        }
        finally
        {
            Volatile.Write(ref line.Value, long.MinValue);
            ponger.Join();
            restore();
        }

        Array.Sort(batchNs);
        return (batchNs[Batches / 2], pinned && pinnedA);
    }

    private static bool PinCurrentThreadTemporarily(int core, out Action restore)
    {
        CpuSet? previous;
        try
        {
            previous = LinuxScheduling.GetAffinity(0);
        }
        catch (InvalidOperationException)
        {
            previous = null;
        }

        bool pinned = PinCurrentThread(core);
        restore = () =>
        {
            if (previous is not null)
            {
                SetAffinity(previous);
            }
        };
        return pinned;
    }

    private static bool PinCurrentThread(int core) => core is >= 0 and <= CpuSet.MaxCpu && SetAffinity(CpuSet.Of([core]));

    private static unsafe bool SetAffinity(CpuSet cpus)
    {
        var mask = cpus.ToMask();
        fixed (ulong* words = mask)
        {
            return LinuxScheduling.SchedSetAffinity(0, mask.Length * sizeof(ulong), words) == 0;
        }
    }

    [StructLayout(LayoutKind.Explicit, Size = 192)]
    private sealed class PaddedCounter
    {
        [FieldOffset(64)]
        public long Value;
    }
}
