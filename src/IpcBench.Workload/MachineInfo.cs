using System.Runtime.InteropServices;

namespace IpcBench.Workload;

/// <summary>What a result must say about the machine it came from.</summary>
public sealed record MachineInfo(
    int LogicalCores,
    string CpuModel,
    string Kernel,
    string DotnetVersion,
    string OperatingSystem,
    string Hostname)
{
    public static MachineInfo Read() => new(
        Environment.ProcessorCount,
        ReadCpuModel(),
        ReadFirstLine("/proc/sys/kernel/osrelease") ?? RuntimeInformation.OSDescription,
        RuntimeInformation.FrameworkDescription,
        RuntimeInformation.OSDescription,
        Environment.MachineName);

    private static string ReadCpuModel()
    {
        try
        {
            foreach (var line in File.ReadLines("/proc/cpuinfo"))
            {
                if (line.StartsWith("model name", StringComparison.Ordinal))
                {
                    return line[(line.IndexOf(':') + 1)..].Trim();
                }
            }
        }
        catch (IOException)
        {
        }

        return RuntimeInformation.ProcessArchitecture.ToString();
    }

    private static string? ReadFirstLine(string path)
    {
        try
        {
            return File.ReadLines(path).FirstOrDefault()?.Trim();
        }
        catch (IOException)
        {
            return null;
        }
    }
}
