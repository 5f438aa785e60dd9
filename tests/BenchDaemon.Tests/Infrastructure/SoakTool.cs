using System.Diagnostics;
using System.Globalization;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>bench/Soak run as a user runs it, killed with everything it started if it outlives its time.</summary>
internal static class SoakTool
{
    /// <param name="nice">The niceness it and every process it starts run at (0: the test's own).</param>
    public static async Task<(int ExitCode, string Output, string Errors)> RunAsync(IEnumerable<string> arguments, TimeSpan timeout,
        int nice = 0, IReadOnlyDictionary<string, string>? environment = null)
    {
        Assert.True(File.Exists(RepoLayout.SoakTool), $"The soak tool was not built at {RepoLayout.SoakTool}.");
        var start = new ProcessStartInfo(nice == 0 ? "dotnet" : "nice")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        if (nice != 0)
        {
            start.ArgumentList.Add("-n");
            start.ArgumentList.Add(nice.ToString(CultureInfo.InvariantCulture));
            start.ArgumentList.Add("dotnet");
        }

        foreach (var argument in arguments.Prepend(RepoLayout.SoakTool).Append("--daemon").Append(RepoLayout.DaemonExecutable))
        {
            start.ArgumentList.Add(argument);
        }

        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        using var soak = Process.Start(start)!;
        var output = soak.StandardOutput.ReadToEndAsync();
        var errors = soak.StandardError.ReadToEndAsync();
        using (var deadline = new CancellationTokenSource(timeout))
        {
            try
            {
                await soak.WaitForExitAsync(deadline.Token);
            }
            catch (OperationCanceledException)
            {
                soak.Kill(entireProcessTree: true);
                throw;
            }
        }

        return (soak.ExitCode, await output, await errors);
    }
}
