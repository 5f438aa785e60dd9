using IpcBench.Daemon.Tests.Infrastructure;
using System.Diagnostics;
using IpcBench.Soak;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The soak's leak signal catches a leak and ignores churn: two HeapGrowth processes, one that only churns garbage (its
/// GC heap and RSS swing with the collector) and one that also keeps 4 MiB a second, read by the soak's own
/// <see cref="LiveHeapProbe"/> and judged by its own <see cref="LiveHeapGrowth"/> bound over a window shorter than the
/// soak's.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class LiveHeapProbeTests(ITestOutputHelper output)
{
    /// <summary>4 MiB/s for this long is 24 MiB, three times the bound; churn alone stays far under it.</summary>
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(6);

    /// <summary>One process, as the soak allows one agent over the same window.</summary>
    private static readonly long Allowed = LiveHeapGrowth.Allowed(1, Window.TotalSeconds);

    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_leaking_process_is_flagged_and_a_churning_one_is_not()
    {
        using var churning = Start("churn");
        using var leaking = Start("leak");
        try
        {
            await Task.WhenAll(ReadyAsync(churning), ReadyAsync(leaking));
            var churnFirst = await LiveHeapProbe.MeasureAsync(churning.Id, ProbeTimeout);
            var leakFirst = await LiveHeapProbe.MeasureAsync(leaking.Id, ProbeTimeout);
            await Task.Delay(Window);
            var churnLast = await LiveHeapProbe.MeasureAsync(churning.Id, ProbeTimeout);
            var leakLast = await LiveHeapProbe.MeasureAsync(leaking.Id, ProbeTimeout);
            output.WriteLine($"churn: {LiveHeapGrowth.Describe(churnFirst, churnLast, Window.TotalSeconds, Allowed)}");
            output.WriteLine($"leak:  {LiveHeapGrowth.Describe(leakFirst, leakLast, Window.TotalSeconds, Allowed)}");

            Assert.NotNull(churnFirst);
            Assert.NotNull(churnLast);
            Assert.NotNull(leakFirst);
            Assert.NotNull(leakLast);

            // The probe reads what is alive: the churning process keeps its ~16 MiB window of survivors, not less.
            Assert.InRange(churnFirst.LiveBytes, 8L << 20, 64L << 20);
            Assert.False(LiveHeapGrowth.Leaked(churnFirst, churnLast, Allowed), "the churning process was flagged as leaking");
            Assert.True(LiveHeapGrowth.Leaked(leakFirst, leakLast, Allowed), "the leaking process was not flagged");
        }
        finally
        {
            Stop(churning);
            Stop(leaking);
        }
    }

    [Fact]
    public async Task A_process_that_is_gone_reads_as_not_measured()
    {
        using var process = Start("churn");
        await ReadyAsync(process);
        Stop(process);
        Assert.Null(await LiveHeapProbe.MeasureAsync(process.Id, ProbeTimeout));
    }

    private static Process Start(string mode)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            ArgumentList = { Path.Combine(AppContext.BaseDirectory, "HeapGrowth.dll"), mode },
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
        };
        return Process.Start(start)!;
    }

    /// <summary>Started, then a second of churn so the runtime's own start-up garbage is gone before the first probe.</summary>
    private static async Task ReadyAsync(Process process)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        Assert.Equal("ready", await process.StandardOutput.ReadLineAsync(timeout.Token));
        await Task.Delay(TimeSpan.FromSeconds(1));
    }

    private static void Stop(Process process)
    {
        if (!process.HasExited)
        {
            process.Kill();
            process.WaitForExit();
        }
    }
}
