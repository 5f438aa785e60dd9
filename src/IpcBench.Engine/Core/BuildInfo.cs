using System.Reflection;
using System.Runtime.InteropServices;
using IpcBench.Iceoryx2;
using IpcBench.Workload;

namespace IpcBench.Daemon.Core;

/// <summary>What ipcbench_build_info and the OpenTelemetry resource say about this build and machine.</summary>
public sealed record BuildInfo(string Version, string DotnetVersion, string Iceoryx2Version, MachineInfo Machine)
{
    /// <summary>
    /// The iceoryx2 release native/iceoryx2-ipcbench pins (Cargo.toml: iceoryx2 = "=0.10.0"; a test keeps the two in
    /// step). The binding's C ABI has no version call of its own, so this is reported when the binding loads.
    /// </summary>
    public const string PinnedIceoryx2Version = "0.10.0";

    private static readonly Lazy<BuildInfo> Instance = new(Read);

    public static BuildInfo Current => Instance.Value;

    private static BuildInfo Read()
    {
        var assembly = typeof(BuildInfo).Assembly;
        var version = assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion
            ?? assembly.GetName().Version?.ToString()
            ?? "unknown";
        string iceoryx2;
        try
        {
            iceoryx2 = Iceoryx2Library.IsAvailable ? PinnedIceoryx2Version : "unavailable";
        }
        catch (Exception e) when (e is DllNotFoundException or TypeInitializationException or BadImageFormatException)
        {
            iceoryx2 = "unavailable";
        }

        return new BuildInfo(version, RuntimeInformation.FrameworkDescription, iceoryx2, MachineInfo.Read());
    }
}
