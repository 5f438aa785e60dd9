using System.Diagnostics;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Runs the real grpcurl, as users do, and hands back what it printed.</summary>
internal static class GrpcurlProcess
{
    public sealed record Result(int ExitCode, string Stdout, string Stderr, string CommandLine);

    public static async Task<Result> RunAsync(IEnumerable<string> arguments)
    {
        var start = new ProcessStartInfo(RepoLayout.Grpcurl) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        string commandLine = "grpcurl " + string.Join(' ', start.ArgumentList);
        using var process = Process.Start(start) ?? throw new InvalidOperationException("grpcurl did not start.");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill();
            throw new TimeoutException($"{commandLine} did not finish within 30 s.");
        }

        return new Result(process.ExitCode, await stdout, await stderr, commandLine);
    }
}
