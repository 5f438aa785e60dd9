namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Daemons that must refuse to start, one per case of a theory, all started on first use (a few at a time) so that
/// each case awaits its own refusal instead of starting a process after the previous one exited. A refusal is a real
/// process exiting with its message; nothing of it runs or measures beside another, so they need no turn of their own.
/// </summary>
internal sealed class RefusingDaemons(Func<IReadOnlyDictionary<string, DaemonSettings>> cases)
{
    /// <summary>More at once would only queue for the 2 cores; fewer would leave one idle while a process starts.</summary>
    private const int AtOnce = 3;

    private readonly Lazy<IReadOnlyDictionary<string, Task<(int ExitCode, string Output)>>> _runs = new(() => StartAll(cases()));

    /// <summary>The exit code and output of the daemon started with <paramref name="case"/>'s settings.</summary>
    public Task<(int ExitCode, string Output)> ResultAsync(string @case) =>
        _runs.Value.TryGetValue(@case, out var run) ? run : throw new ArgumentException($"no refusal case '{@case}'", nameof(@case));

    /// <summary>Waits for every daemon that was started, so what they read can be removed.</summary>
    public async Task WaitForAllAsync()
    {
        if (_runs.IsValueCreated)
        {
            await Task.WhenAll(_runs.Value.Values).ContinueWith(_ => { }, TaskScheduler.Default);
        }
    }

    private static Dictionary<string, Task<(int ExitCode, string Output)>> StartAll(IReadOnlyDictionary<string, DaemonSettings> cases)
    {
        var slots = new SemaphoreSlim(AtOnce);
        return cases.ToDictionary(c => c.Key, c => RunAsync(c.Value, slots));
    }

    private static async Task<(int ExitCode, string Output)> RunAsync(DaemonSettings settings, SemaphoreSlim slots)
    {
        await slots.WaitAsync();
        try
        {
            return await DaemonProcess.StartExpectingRefusalAsync(settings);
        }
        finally
        {
            slots.Release();
        }
    }
}
