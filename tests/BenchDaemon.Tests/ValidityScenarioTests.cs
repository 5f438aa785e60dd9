using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>A real scenario offered more than any transport delivers: its result says so, and comparisons draw no verdict from it.</summary>
[Collection(DaemonCollection.Name)]
public sealed class ValidityScenarioTests(SharedInProcessDaemon shared, ITestOutputHelper output) : IClassFixture<SharedInProcessDaemon>, IDisposable
{
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Fact]
    public async Task ARateNoTransportReaches_IsARateShortfall_AndCompareScenariosIsInconclusive()
    {
        var daemon = shared.Daemon;
        // 64 KB copied and verified per message: tens of thousands a second here, never the billion offered.
        var spec = Specs.Stream("channels", publishers: 1, subscribers: 1, Specs.Seconds(1), payloadBytes: 65536).With(s => s.RatePerPublisher = 1e9);

        var result = await daemon.RunScenarioAsync(spec);

        output.WriteLine(string.Join("\n", result.Stats.Validity.Select(v => $"{v.Kind}: {v.Detail}")));
        Assert.Equal(ScenarioState.Completed, result.State);
        var shortfall = Assert.Single(result.Stats.Validity, v => v.Kind == ValidityKind.RateShortfall);
        Assert.Contains("of the offered 1,000,000,000 msg/s (at least 99 % needed)", shortfall.Detail, StringComparison.Ordinal);
        Assert.Equal(result.Stats.Validity, (await daemon.GetScenarioAsync(result.Id)).Stats.Validity);

        var compared = await daemon.Control.CompareScenariosAsync(new CompareScenariosRequest { BaselineId = result.Id, CandidateId = result.Id });
        Assert.Equal(ComparisonVerdict.Inconclusive, compared.Verdict);
        Assert.Contains(compared.Notes, n => n.StartsWith($"baseline {result.Id} is not a valid measurement: rate shortfall: delivered ", StringComparison.Ordinal));
    }
}
