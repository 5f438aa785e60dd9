namespace IpcBench.Daemon.Model;

/// <summary>
/// Which machine a probe was taken on, for its history: host name, CPU model and logical cores, the fields of a report's
/// environment that name the hardware. Kernel, OS, .NET and clock are left out: an update moves none of the placements.
/// </summary>
public static class MachineIdentity
{
    public static string Of(RunEnvironment environment) => $"{environment.Hostname} | {environment.CpuModel} | {environment.LogicalCores} cores";
}
