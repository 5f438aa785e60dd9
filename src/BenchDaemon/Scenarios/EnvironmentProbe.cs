using IpcBench.Daemon.Core;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>The machine a scenario ran on, as its result reports it.</summary>
internal static class EnvironmentProbe
{
    public static EnvironmentInfo Read()
    {
        var machine = MachineInfo.Read();
        var probe = CoreToCoreProbe.Measure(TimeSpan.FromMilliseconds(30));
        var info = new EnvironmentInfo
        {
            LogicalCores = machine.LogicalCores,
            CpuModel = machine.CpuModel,
            Kernel = machine.Kernel,
            DotnetVersion = machine.DotnetVersion,
            Os = machine.OperatingSystem,
            Hostname = machine.Hostname,
        };
        if (probe is not null)
        {
            // Nanosecond precision: TimeSpan's 100 ns ticks would hide the ~50 ns vs ~450 ns difference this probe exists for.
            info.CoreToCoreRoundTrip = StatsFormatting.Nanoseconds((long)Math.Round(probe.MedianRoundTripNs));
            info.CoreToCoreCores = probe.Cores;
        }

        return info;
    }
}
