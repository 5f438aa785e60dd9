using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Offered load through the control plane (issue 26): rates_per_publisher as a cell dimension, rate_search's answer and
/// probes on each cell, and every bad rate or bound refused naming its field. Channels cells of 0.3 s at small rates.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class OfferedLoadContractTests(SuiteContractTests.Fixture shared, ITestOutputHelper output) : IClassFixture<SuiteContractTests.Fixture>, IDisposable
{
    private const string Cell = """ "transports":["channels"],"payload_bytes":[8],"duration":"1s" """;

    private readonly InProcessDaemon _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Theory]
    [InlineData("""{CELL,"rates_per_publisher":[1000,-1]}""", "spec.rates_per_publisher: [1] must be 0 (closed loop) to 1e9 msg/s per publisher; got -1")]
    [InlineData("""{CELL,"rates_per_publisher":["NaN"]}""", "spec.rates_per_publisher: [0] must be 0 (closed loop) to 1e9")]
    [InlineData("""{CELL,"rates_per_publisher":[2e9]}""", "spec.rates_per_publisher: [0] must be 0 (closed loop) to 1e9")]
    [InlineData("""{CELL,"rates_per_publisher":[1000,0,1000]}""", "spec.rates_per_publisher: [2] repeats 1000: each rate once")]
    [InlineData("""{CELL,"rates_per_publisher":[1000],"rate_per_publisher":5}""", "spec.rates_per_publisher: excludes rate_per_publisher (got 5)")]
    [InlineData("""{"preset":"reference-1","rates_per_publisher":[1000]}""", "spec.rates_per_publisher: must be empty with a preset")]
    [InlineData("""{CELL,"rate_search":{}}""", "spec.rate_search.max_p99_latency: is required")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0s"}}""", "spec.rate_search.max_p99_latency: must be 1 µs to 10 s; got 0s 0ns")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"11s"}}""", "spec.rate_search.max_p99_latency: must be 1 µs to 10 s; got 11s 0ns")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"-0.001s"}}""", "spec.rate_search.max_p99_latency: must be 1 µs to 10 s")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s","min_delivered_ratio":1.5}}""", "spec.rate_search.min_delivered_ratio: must be > 0 and <= 1 (0 means 0.99); got 1.5")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s","min_delivered_ratio":-0.5}}""", "spec.rate_search.min_delivered_ratio: must be > 0 and <= 1")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s","max_steps":1}}""", "spec.rate_search.max_steps: must be 2..30 (0 means 10); got 1")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s","max_steps":31}}""", "spec.rate_search.max_steps: must be 2..30 (0 means 10); got 31")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s"},"rates_per_publisher":[100]}""", "spec.rate_search: searches the offered rate itself")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s"},"rate_per_publisher":100}""", "spec.rate_search: searches the offered rate itself")]
    [InlineData("""{CELL,"rate_search":{"max_p99_latency":"0.001s"},"repetitions":3}""", "spec.rate_search: a rate search runs each cell's search once")]
    [InlineData("""{"preset":"saturation-1","repetitions":2}""", "spec.repetitions: a rate search runs each cell's search once")]
    public async Task StartSuite_RefusesABadRateOrBound_NamingTheField(string spec, string expected)
    {
        var request = new StartSuiteRequest { Spec = Google.Protobuf.JsonParser.Default.Parse<SuiteSpec>(spec.Replace("CELL", Cell, StringComparison.Ordinal)) };

        var e = await Assert.ThrowsAsync<RpcException>(async () => await _daemon.Control.StartSuiteAsync(request));

        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.Contains(expected, e.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task RateSweep_IsACellDimension_EachRateItsOwnCell_InEveryExport()
    {
        var spec = SuiteContractTests.Matrix([8], 0.3, repetitions: 1);
        spec.RatesPerPublisher.AddRange([0, 500, 2000]);

        var suite = await SuiteContractTests.RunAsync(_daemon, spec);

        Assert.Equal(SuiteState.Completed, suite.State);
        Assert.Equal([0, 500, 2000], suite.Cells.Select(c => c.Spec.RatePerPublisher));
        Assert.Equal([0, 500, 2000], suite.Spec.RatesPerPublisher);
        // Rate-limited cells deliver about what was offered (0.3 s at 500/s is ~150 messages: within 20 %).
        Assert.InRange(suite.Cells[1].Stats.MessagesPerSecond.Median, 400, 600);
        Assert.All(suite.Cells, c => Assert.False(c.HasSustainableRatePerPublisher));

        var markdown = (await _daemon.Control.ExportSuiteAsync(new ExportSuiteRequest { Id = suite.Id, Format = ReportFormat.Markdown })).Content;
        // Labels carry the rate (after channels' resolved wait strategy).
        Assert.Contains("| channels 8 B 1:1 full yield @ 500/s |", markdown, StringComparison.Ordinal);
        Assert.Contains("| channels 8 B 1:1 full yield @ 2.0 K/s |", markdown, StringComparison.Ordinal);
        var csv = CsvTable.Parse((await _daemon.Control.ExportSuiteAsync(new ExportSuiteRequest { Id = suite.Id, Format = ReportFormat.Csv })).Content);
        Assert.Equal(["0", "500", "2000"], csv.Rows.Select(r => csv.Get(r, "rate_per_publisher")).Distinct());

        // Comparing the suite with itself matches cells by key, rate included: three cells, not one.
        var compared = await _daemon.Control.CompareSuitesAsync(new CompareSuitesRequest { BaselineId = suite.Id, CandidateId = suite.Id });
        Assert.Equal([0, 500, 2000], compared.Cells.Select(c => c.Spec.RatePerPublisher));
    }

    [Fact]
    public async Task RateSearch_AnswersPerCell_WithItsProbesAsScenariosOfTheSuite()
    {
        var spec = SuiteContractTests.Matrix([8], 0.3, repetitions: 0);
        // A loose bound, so the ramp usually runs; three steps keep it short. Whether a probe passes is this machine's
        // business (on a busy 2-core host even a low rate can fail on sender lag): the answer must follow from the probes.
        spec.RateSearch = new RateSearch { MaxP99Latency = Duration.FromTimeSpan(TimeSpan.FromSeconds(5)), MaxSteps = 3 };

        var suite = await SuiteContractTests.RunAsync(_daemon, spec);

        Assert.Equal(SuiteState.Completed, suite.State);
        Assert.Equal(0.99, suite.Spec.RateSearch.MinDeliveredRatio);
        var cell = Assert.Single(suite.Cells);
        Assert.Single(cell.ScenarioIds);
        Assert.Equal(0, cell.Spec.RatePerPublisher);
        Assert.InRange(cell.RateProbes.Count, 1, 3);
        // The ramp: x4 from the first probe while probes pass.
        if (cell.RateProbes is [{ Passed: true } first, var second, ..])
        {
            Assert.Equal(first.RatePerPublisher * 4, second.RatePerPublisher, 0.01 * second.RatePerPublisher);
        }

        Assert.All(cell.RateProbes, p => Assert.Equal(p.Passed, p.Reason.Length == 0));
        Assert.Equal(cell.RateProbes.Any(p => p.Passed), cell.HasSustainableRatePerPublisher);
        if (cell.HasSustainableRatePerPublisher)
        {
            Assert.Equal(cell.RateProbes.Where(p => p.Passed).Max(p => p.RatePerPublisher), cell.SustainableRatePerPublisher);
            Assert.Equal(cell.SustainableRatePerPublisher, cell.SustainableBracketLow);
            Assert.DoesNotContain("no sustainable rate", cell.RateSearchResult, StringComparison.Ordinal);
        }
        else
        {
            Assert.StartsWith("no sustainable rate: the lowest probe", cell.RateSearchResult, StringComparison.Ordinal);
        }

        Assert.Equal(1 + cell.RateProbes.Count, suite.ScenariosDone);
        Assert.Equal(suite.ScenariosDone, suite.ScenariosTotal);
        var listed = await _daemon.ListScenariosAsync(new ListScenariosRequest { SuiteId = suite.Id });
        Assert.Equal(cell.RateProbes.Select(p => p.ScenarioId).Append(cell.ScenarioIds[0]).Order(), listed.Scenarios.Select(s => s.Id).Order());
        Assert.All(cell.RateProbes, p => Assert.Equal(p.RatePerPublisher, listed.Scenarios.Single(s => s.Id == p.ScenarioId).Spec.RatePerPublisher));
    }

    [Fact]
    public async Task RateSearch_NothingSustainable_SaysSoOnTheCell()
    {
        var spec = SuiteContractTests.Matrix([8], 0.3, repetitions: 1);
        // No wake-up across threads takes under a microsecond at p99: the lowest probe fails.
        // Any delivery passes, so it is the latency bound that fails.
        spec.RateSearch = new RateSearch { MaxP99Latency = Duration.FromTimeSpan(TimeSpan.FromMicroseconds(1)), MinDeliveredRatio = 0.01, MaxSteps = 2 };

        var suite = await SuiteContractTests.RunAsync(_daemon, spec);

        Assert.Equal(SuiteState.Completed, suite.State);
        var cell = Assert.Single(suite.Cells);
        var probe = Assert.Single(cell.RateProbes);
        Assert.False(probe.Passed);
        Assert.StartsWith("latency p99 ", probe.Reason, StringComparison.Ordinal);
        Assert.False(cell.HasSustainableRatePerPublisher);
        Assert.StartsWith("no sustainable rate: the lowest probe (", cell.RateSearchResult, StringComparison.Ordinal);
        Assert.Equal(probe.RatePerPublisher, cell.SustainableBracketHigh);
    }
}
