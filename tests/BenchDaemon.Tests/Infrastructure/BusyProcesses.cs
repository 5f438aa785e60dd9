using System.Diagnostics;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Busy-looping shells outside the daemon's process tree, so the noise a scenario measures ("others' CPU") is real;
/// killed by pid on dispose. At nice 19: on an idle machine one still takes a whole CPU, far above any small
/// max_noise_percent, and on a busy one (the other lanes) the others' share is there without it, while at the default
/// weight two of them took ~20 CPU-s from the other lanes over one 18 s test (process accounting, 2026-11-30).
/// </summary>
internal sealed class BusyProcesses : IDisposable
{
    private readonly List<Process> _processes = [];

    public BusyProcesses(int count)
    {
        for (int i = 0; i < count; i++)
        {
            _processes.Add(Process.Start(new ProcessStartInfo("nice", ["-n", "19", "sh", "-c", "while :; do :; done"]) { UseShellExecute = false })!);
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
