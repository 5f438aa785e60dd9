using System.Runtime.InteropServices;
using IpcBench.Transports;

namespace IpcBench.Agent;

/// <summary>
/// Ends the agent when its daemon dies, even by SIGKILL, even while the agent's threads are busy in a hot loop. A thread
/// of its own waits in poll(2) on a pidfd of the daemon and, every <see cref="CheckIntervalMs"/>, reads the daemon's
/// state from /proc (<see cref="ProcessInstance"/>: pid and start time, a zombie is dead). docs/operations.md promises 250 ms.
/// </summary>
/// <remarks>
/// Both are needed. The pidfd becomes readable, and the agent is reparented, only once every thread of the daemon has
/// exited; the last one tears down its address space first, and on two cores busy with spinning agents that took
/// ~280 ms after a SIGKILL. The daemon's main thread is a zombie within a few ms to ~140 ms of it, which /proc shows;
/// the pidfd wakes the agent at once on an ordinary exit. Which process is watched is settled at start: the daemon
/// launched this agent, so while getppid() still returns its pid after its start time was read, that start time is
/// the daemon's, and the pid cannot since have been reused. prctl(PR_SET_PDEATHSIG) would not do: it fires when the
/// daemon's *thread* that spawned us exits, and .NET spawns from whichever pool thread asked, which may retire long
/// before the daemon does.
/// </remarks>
public static unsafe partial class ParentWatchdog
{
    public const int ExitCode = 3;

    /// <summary>
    /// How often the daemon's state is read: a /proc read of a few microseconds, allocation-free, but each wake-up costs a
    /// context switch. Every 10 ms the watchdog took 1.9 % of a core in every agent (0.17 CPU-s in its first 9 s, on this
    /// project's 2-vCPU VM), thirty-two agents' worth of a core's half in a soak; every 25 ms leaves 140 ms + 25 ms of the
    /// 250 ms for the slowest zombie seen. A pidfd of the daemon's main thread alone (PIDFD_THREAD, Linux 6.9) would need
    /// no polling, but it too becomes readable only when the whole group has exited (measured on 6.18).
    /// </summary>
    private const int CheckIntervalMs = 25;

    private const long SysPidfdOpen = 434; // the same number on every architecture
    private const short PollIn = 1;
    private const int Interrupted = 4; // EINTR

    public static void Start(int daemonPid, Action<string> log)
    {
        int pidfd = (int)Syscall(SysPidfdOpen, daemonPid, 0);
        var daemon = ProcessInstance.Of(daemonPid);
        if (GetParentPid() != daemonPid || daemon is not { } watched)
        {
            Exit(daemonPid, log);
            return;
        }

        var thread = new Thread(() =>
        {
            // A negative fd (no pidfd_open before Linux 5.3) is ignored by poll(2): then it is a plain sleep.
            var poll = new PollFd { Fd = pidfd, Events = PollIn };
            while (watched.IsAlive)
            {
                int ready = Poll(&poll, 1, CheckIntervalMs);
                if (ready > 0)
                {
                    break;
                }

                if (ready < 0 && Marshal.GetLastPInvokeError() != Interrupted)
                {
                    Thread.Sleep(CheckIntervalMs);
                }
            }

            Exit(daemonPid, log);
        })
        {
            IsBackground = true,
            Name = "parent-watchdog",
        };
        thread.Start();
    }

    /// <summary>
    /// Ends the process at once with _exit, not through Environment.Exit: the runtime's orderly shutdown (ProcessExit
    /// handlers, stopping the diagnostics server and debugger transport) takes a time of its own that a loaded machine
    /// stretches, and the 250 ms cannot spare it. What that shutdown did that matters to anyone else, removing this
    /// process's diagnostic files, is done here first; no finalizers or disposals are lost, it runs none either.
    /// </summary>
    private static void Exit(int daemonPid, Action<string> log)
    {
        log($"daemon {daemonPid} is gone; exiting");
        _ = DiagnosticFiles.RemoveOwn();
        ExitNow(ExitCode);
    }

    [LibraryImport("libc", EntryPoint = "getppid")]
    private static partial int GetParentPid();

    // syscall(2) is variadic in C; on x86-64 and arm64 Linux integer variadic arguments travel exactly like fixed ones.
    [LibraryImport("libc", EntryPoint = "syscall")]
    private static partial long Syscall(long number, int pid, uint flags);

    [LibraryImport("libc", EntryPoint = "poll", SetLastError = true)]
    private static partial int Poll(PollFd* fds, nuint count, int timeoutMs);

    [LibraryImport("libc", EntryPoint = "_exit")]
    private static partial void ExitNow(int status);

    [StructLayout(LayoutKind.Sequential)]
    private struct PollFd
    {
        public int Fd;
        public short Events;
        public short Revents;
    }
}
