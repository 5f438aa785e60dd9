using IpcBench.Transports;

namespace IpcBench.Daemon.Persistence;

/// <summary>
/// "pid:start-ticks" of a process (<see cref="ProcessInstance"/> as text): who owns an unfinished scenario row. The
/// start time tells a live owner from an unrelated process that has since been given the same pid.
/// </summary>
public static class ProcessIdentity
{
    public static readonly string Current = ProcessInstance.Current.ToString();

    /// <summary>True while the process <paramref name="owner"/> names still runs (zombies count as gone).</summary>
    public static bool IsAlive(string owner) => ProcessInstance.TryParse(owner, out var instance) && instance.IsAlive;
}
