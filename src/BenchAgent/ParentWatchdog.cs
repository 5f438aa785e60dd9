using System.Runtime.InteropServices;

namespace IpcBench.Agent;

/// <summary>
/// Ends the agent when its daemon dies, even by SIGKILL, even while the agent's threads are busy in a hot loop: once the
/// parent is gone the kernel reparents us, and getppid() stops returning the daemon's pid.
/// </summary>
public static partial class ParentWatchdog
{
    public const int ExitCode = 3;

    public static void Start(int daemonPid, Action<string> log)
    {
        var thread = new Thread(() =>
        {
            while (true)
            {
                if (GetParentPid() != daemonPid)
                {
                    log($"daemon {daemonPid} is gone; exiting");
                    Environment.Exit(ExitCode);
                }

                Thread.Sleep(250);
            }
        })
        {
            IsBackground = true,
            Name = "parent-watchdog",
        };
        thread.Start();
    }

    [LibraryImport("libc", EntryPoint = "getppid")]
    private static partial int GetParentPid();
}
