using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// spec.latency_sample_every: the default per kind of run, echoed in the spec, and latency.samples counting exactly the
/// messages measured (one in N of those in the window), across the process boundary (the flag travels in the header).
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class LatencySamplingTests(SharedDaemon shared, ITestOutputHelper output) : IDisposable
{
    private readonly DaemonProcess _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    [Fact]
    public async Task A_closed_loop_stream_measures_one_message_in_64_by_default()
    {
        var result = await _daemon.RunScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Seconds(0.5), Specs.Milliseconds(200)));

        Assert.Equal(ScenarioState.Completed, result.State);
        Assert.Equal(64, result.Spec.LatencySampleEvery);
        ulong measured = result.Stats.MeasuredMessages;
        output.WriteLine($"measured {measured}, latency samples {result.Stats.Latency.Samples}");
        Assert.True(measured > 1000, $"measured {measured}");
        // Every 64th sequence number is sampled; the window holds a contiguous run of them, give or take one at each end.
        Assert.InRange((long)result.Stats.Latency.Samples, (long)(measured / 64) - 1, (long)(measured / 64) + 1);
    }

    [Fact]
    public async Task Sampling_every_message_measures_each_one()
    {
        var result = await _daemon.RunScenarioAsync(
            Specs.Stream("uds", 1, 1, Specs.Seconds(0.5), Specs.Milliseconds(200)).With(s => s.LatencySampleEvery = 1));

        Assert.Equal(ScenarioState.Completed, result.State);
        Assert.Equal(1, result.Spec.LatencySampleEvery);
        Assert.Equal(result.Stats.MeasuredMessages, result.Stats.Latency.Samples);
    }

    [Theory]
    [InlineData(Mode.RoundTrip, 0)]
    [InlineData(Mode.Stream, 5000)]
    public async Task Round_trips_and_rate_limited_runs_measure_every_message_by_default(Mode mode, double rate)
    {
        var result = await _daemon.RunScenarioAsync(
            Specs.Stream("uds", 1, 1, Specs.Seconds(0.5), Specs.Milliseconds(200)).With(s => { s.Mode = mode; s.RatePerPublisher = rate; }));

        Assert.Equal(ScenarioState.Completed, result.State);
        Assert.Equal(1, result.Spec.LatencySampleEvery);
        Assert.True(result.Stats.Latency.Samples > 0);
        Assert.Equal(result.Stats.MeasuredMessages, result.Stats.Latency.Samples);
    }
}
