using System.Diagnostics;
using IpcBench.Transports.Channels;

namespace IpcBench.Transports.Tests;

/// <summary>
/// A paced BLOCK publisher sleeps through the gaps between its sends. It used to yield through every gap under 2 ms:
/// two publishers at 500 msg/s each kept the daemon at ~190 % CPU, so a soak of a few such scenarios left the machine
/// nothing to run anything else on, and its figures measured a saturated machine.
/// </summary>
[Collection(nameof(SerialMeasurements))]
public sealed class PacedPublisherTests
{
    [Fact]
    public void APublisherAt500PerSecond_WithBlock_UsesAFractionOfACore_AndSendsEveryMessage()
    {
        var process = Process.GetCurrentProcess();
        var cpuBefore = process.TotalProcessorTime;
        var wall = Stopwatch.StartNew();

        var outcome = InProcessLoop.Run(new ChannelsTransport(), 1, 1, payloadBytes: 64, messagesPerPublisher: 1_000, ratePerPublisher: 500, waitMode: WaitMode.Block);

        process.Refresh();
        double cores = (process.TotalProcessorTime - cpuBefore).TotalSeconds / wall.Elapsed.TotalSeconds;
        Assert.Equal(1_000, outcome.Sent);
        Assert.Equal(1_000, outcome.Received.Received);
        Assert.True(wall.Elapsed >= TimeSpan.FromSeconds(1.9), $"1,000 messages at 500/s took {wall.Elapsed.TotalSeconds:F2} s: not paced");

        // A yielding wait holds a whole core (1.0 here, whatever else runs); sleeping, the pair of threads take ~0.05.
        Assert.True(cores < 0.35, $"publisher and subscriber used {cores:F2} cores for 500 msg/s");
    }
}
