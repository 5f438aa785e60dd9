using IpcBench.Daemon.Model;
using IpcBench.Workload;

namespace IpcBench.Daemon.Scenarios;

/// <summary>The machine a scenario ran on, as its result reports it.</summary>
internal static class EnvironmentProbe
{
    public static RunEnvironment Read()
    {
        var machine = MachineInfo.Read();
        var probe = CoreToCoreProbe.Measure(TimeSpan.FromMilliseconds(30));
        // Nanosecond precision: TimeSpan's 100 ns ticks would hide the ~50 ns vs ~450 ns difference this probe exists for.
        return new RunEnvironment(
            machine.LogicalCores, machine.CpuModel, machine.Kernel, machine.DotnetVersion, machine.OperatingSystem, machine.Hostname,
            probe is null ? null : (long)Math.Round(probe.MedianRoundTripNs), probe?.Cores ?? string.Empty);
    }
}
