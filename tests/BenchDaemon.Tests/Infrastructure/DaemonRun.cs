using System.Diagnostics;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>A command run to its end (the daemon's `run`, or a shell around it): its exit code, its stdout and everything it printed.</summary>
internal static class DaemonRun
{
    /// <summary>BenchDaemon with <paramref name="arguments"/>; killed with its tree, and a TimeoutException, after <paramref name="timeout"/>.</summary>
    public static Task<(int ExitCode, string Stdout, OutputLog Log)> RunAsync(TimeSpan timeout, params string[] arguments)
    {
        var start = new ProcessStartInfo(RepoLayout.DaemonExecutable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        // `run` as it ships: its scenarios hand their agents on (these tests look at what run prints and writes, not at
        // its processes), which spares each scenario an agent's start.
        start.Environment.Remove("IpcBench__WarmAgentIdleSeconds");
        return RunAsync(start, timeout);
    }

    /// <summary>Any command, e.g. `run` under script(1) for a terminal.</summary>
    public static async Task<(int ExitCode, string Stdout, OutputLog Log)> RunAsync(ProcessStartInfo start, TimeSpan timeout)
    {
        var log = new OutputLog();
        using var process = log.Start(start);
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{start.FileName} {string.Join(' ', start.ArgumentList)} did not finish within {timeout.TotalSeconds:0} s.\n{log.Describe()}");
        }

        process.WaitForExit();
        var stdout = string.Join('\n', log.Lines(0).Where(l => l.StartsWith("[out] ", StringComparison.Ordinal)).Select(l => l["[out] ".Length..]));
        return (process.ExitCode, stdout, log);
    }
}
