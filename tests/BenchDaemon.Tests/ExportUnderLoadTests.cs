using System.Diagnostics;
using Google.Protobuf;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A lab user's script exports results while other scenarios start and finish: once, on the hand-written server, an
/// ExportScenarios after ~23 back-to-back scenarios never answered. Every call here must answer within its bound.
/// A property of the control plane and the store, so on the in-process host, its scenarios on in-process channels,
/// paced (<see cref="Specs.Paced"/>): they churn starts and finishes, not the CPU.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class ExportUnderLoadTests(ITestOutputHelper output)
{
    private const int Exports = 1000;
    private const int Callers = 4;

    /// <summary>At least this many scenarios start and finish while the exports go on.</summary>
    private const int Scenarios = 12;

    /// <summary>Generous for a 2-core machine that also runs scenarios; a hung call waits forever, so any bound catches it.</summary>
    private static readonly TimeSpan CallBound = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task AThousandExports_InterleavedWithScenariosStartingAndFinishing_AreEachAnsweredWithinTheirBound()
    {
        await using var daemon = await InProcessDaemon.StartAsync();
        using var log = daemon.LogTo(output);
        using var done = new CancellationTokenSource();

        // Short scenarios back to back in two lanes, so exports meet scenarios starting, running, finishing and being stored.
        var finished = new List<string>();
        var churn = Enumerable.Range(0, 2).Select(lane => Task.Run(async () =>
        {
            while (!done.IsCancellationRequested)
            {
                var scenario = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Milliseconds(200)).Paced());
                lock (finished)
                {
                    finished.Add(scenario.Id);
                }
            }
        })).ToList();
        int FinishedCount()
        {
            lock (finished)
            {
                return finished.Count;
            }
        }

        var answered = 0;
        var slowest = TimeSpan.Zero;
        var overall = Stopwatch.StartNew();
        var callers = Enumerable.Range(0, Callers).Select(caller => Task.Run(async () =>
        {
            // At least Exports calls in all, and on until the scenarios have churned (bounded: the churn is asserted below).
            for (var i = caller; i < Exports || (FinishedCount() < Scenarios && overall.Elapsed < TimeSpan.FromSeconds(90)); i += Callers)
            {
                var request = Request(i, finished);
                var timer = Stopwatch.StartNew();
                ExportScenariosResponse response;
                try
                {
                    response = await daemon.ExportScenariosAsync(request).WaitAsync(CallBound);
                }
                catch (TimeoutException)
                {
                    throw new Xunit.Sdk.XunitException($"export {i} ({request}) was not answered within {CallBound.TotalSeconds} s\n{daemon.Output.Describe()}");
                }

                lock (finished)
                {
                    slowest = timer.Elapsed > slowest ? timer.Elapsed : slowest;
                    answered++;
                }

                Assert.Equal(request.Ids.Count > 0 ? request.Ids.Count : response.ScenarioCount, response.ScenarioCount);
                if (response.Format == ExportFormat.Json)
                {
                    Assert.Equal(response.ScenarioCount, JsonParser.Default.Parse<ScenarioExport>(response.Content).Scenarios.Count);
                }
                else
                {
                    Assert.StartsWith("id,", response.Content, StringComparison.Ordinal);
                }
            }
        })).ToList();

        try
        {
            await Task.WhenAll(callers);
        }
        finally
        {
            await done.CancelAsync();
        }

        await Task.WhenAll(churn);
        output.WriteLine($"{answered} exports answered while {finished.Count} scenarios ran; slowest {slowest.TotalMilliseconds:0} ms");
        Assert.True(answered >= Exports, $"{answered} exports answered");
        Assert.True(finished.Count >= Scenarios, $"only {finished.Count} scenarios finished during the exports: the load did not interleave");
    }

    /// <summary>JSON and CSV, by filter (pages of every size) and by the ids finished so far.</summary>
    private static ExportScenariosRequest Request(int i, List<string> finished)
    {
        var request = new ExportScenariosRequest { Format = i % 3 == 0 ? ExportFormat.Csv : ExportFormat.Json };
        lock (finished)
        {
            if (i % 2 == 0 && finished.Count > 0)
            {
                request.Ids.AddRange(finished.TakeLast(1 + (i % 7)));
                return request;
            }
        }

        request.PageSize = 1 + (i % 50);
        return request;
    }
}
