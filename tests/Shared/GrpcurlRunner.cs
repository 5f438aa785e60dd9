using System.Diagnostics;

namespace IpcBench.Tests.Shared;

/// <summary>
/// Runs the real grpcurl binary, as users do, and hands back what it printed. Linked into every test project that
/// drives a server with it; <see cref="GrpcurlLocator"/> says where the binary is.
/// </summary>
internal static class GrpcurlRunner
{
    public sealed record Result(int ExitCode, string Stdout, string Stderr, string CommandLine);

    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <param name="environment">Added to grpcurl's environment: what <c>-expand-headers</c> reads a token from, as users pass it.</param>
    public static async Task<Result> RunAsync(IEnumerable<string> arguments, IReadOnlyDictionary<string, string>? environment = null)
    {
        var start = new ProcessStartInfo(GrpcurlLocator.Require()) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        string commandLine = "grpcurl " + string.Join(' ', start.ArgumentList);
        using var process = Process.Start(start) ?? throw new InvalidOperationException("grpcurl did not start.");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(Timeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill();
            throw new TimeoutException($"{commandLine} did not finish within {Timeout.TotalSeconds:0} s.");
        }

        return new Result(process.ExitCode, await stdout, await stderr, commandLine);
    }
}
