using System.Diagnostics;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Busy-looping shells outside the daemon's process tree, so the noise a scenario measures ("others' CPU") is real;
/// killed by pid on dispose. Two of them keep a two-CPU machine far above any small max_noise_percent.
/// </summary>
internal sealed class BusyProcesses : IDisposable
{
    private readonly List<Process> _processes = [];

    public BusyProcesses(int count)
    {
        for (int i = 0; i < count; i++)
        {
            _processes.Add(Process.Start(new ProcessStartInfo("sh", ["-c", "while :; do :; done"]) { UseShellExecute = false })!);
        }
    }

    public void Dispose()
    {
        foreach (var process in _processes)
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit();
            process.Dispose();
        }
    }
}
