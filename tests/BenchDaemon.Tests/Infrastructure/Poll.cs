using System.Diagnostics;

namespace IpcBench.Daemon.Tests.Infrastructure;

public static class Poll
{
    /// <summary>Waits for <paramref name="condition"/>; fails with <paramref name="describe"/>'s account after <paramref name="timeout"/>.</summary>
    public static async Task UntilAsync(Func<bool> condition, TimeSpan timeout, Func<string> describe)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > timeout)
            {
                throw new Xunit.Sdk.XunitException(describe());
            }

            await Task.Delay(50);
        }
    }
}
