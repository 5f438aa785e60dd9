using Google.Protobuf.WellKnownTypes;
using IpcBench.Daemon.Tests.Infrastructure;
using Grpc.Core;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// What the control plane refuses, and how: the status code and the field named first in the message. A contract of the
/// control plane, so on the in-process host; the one scenario that runs is on the in-process channels transport.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class ValidationTests(SharedInProcessDaemon shared, ITestOutputHelper output) : IClassFixture<SharedInProcessDaemon>, IDisposable
{
    private static readonly ScenarioSpec Valid = Specs.Stream("channels", publishers: 1, subscribers: 1, Specs.Seconds(1), payloadBytes: 8);

    private readonly InProcessDaemon _daemon = shared.Daemon;
    private readonly IDisposable _log = shared.Daemon.LogTo(output);

    public void Dispose() => _log.Dispose();

    /// <summary>Case name → the field the refusal must name, and a spec that is valid but for that one field.</summary>
    private static readonly Dictionary<string, (string Field, ScenarioSpec Spec)> InvalidSpecs = new()
    {
        ["unknown transport"] = ("spec.transport", Valid.With(s => s.Transport = "carrier-pigeon")),
        ["no transport"] = ("spec.transport", Valid.With(s => s.Transport = string.Empty)),
        ["0 publishers"] = ("spec.publishers", Valid.With(s => s.Publishers = 0)),
        ["publishers above the maximum"] = ("spec.publishers", Valid.With(s => s.Publishers = SharedDaemon.MaxPublishers + 1)),
        ["0 subscribers"] = ("spec.subscribers", Valid.With(s => s.Subscribers = 0)),
        ["subscribers above the maximum"] = ("spec.subscribers", Valid.With(s => s.Subscribers = SharedDaemon.MaxSubscribers + 1)),
        ["0 payload bytes"] = ("spec.payload_bytes", Valid.With(s => s.PayloadBytes = 0)),
        ["payload above the maximum"] = ("spec.payload_bytes", Valid.With(s => s.PayloadBytes = SharedDaemon.MaxPayloadBytes + 1)),
        ["PAIRED with N != M"] = ("spec.topology", Valid.With(s => { s.Topology = Topology.Paired; s.Publishers = 2; s.Subscribers = 3; })),
        ["negative duration"] = ("spec.duration", Valid.With(s => s.Duration = new Duration { Seconds = -1 })),
        ["negative sub-second duration"] = ("spec.duration", Valid.With(s => s.Duration = new Duration { Nanos = -500_000_000 })),
        ["zero duration"] = ("spec.duration", Valid.With(s => s.Duration = new Duration())),
        ["duration over a year"] = ("spec.duration", Valid.With(s => s.Duration = new Duration { Seconds = 366L * 24 * 3600 })),
        // Beyond protobuf's own range (about 10,000 years) a Duration cannot even be converted; found by ControlPlaneFuzzTests.
        ["duration beyond protobuf's range"] = ("spec.duration", Valid.With(s => s.Duration = new Duration { Seconds = long.MaxValue })),
        ["warmup beyond protobuf's range"] = ("spec.warmup", Valid.With(s => s.Warmup = new Duration { Seconds = Duration.MaxSeconds + 1 })),
        ["negative warmup"] = ("spec.warmup", Valid.With(s => s.Warmup = new Duration { Seconds = -2 })),
        ["negative rate"] = ("spec.rate_per_publisher", Valid.With(s => s.RatePerPublisher = -1)),
        ["spin on named pipes"] = ("spec.wait_strategy", Valid.With(s => { s.Transport = "named-pipes"; s.WaitStrategy = WaitStrategy.Spin; })),
        ["yield on named pipes"] = ("spec.wait_strategy", Valid.With(s => { s.Transport = "named-pipes"; s.WaitStrategy = WaitStrategy.Yield; })),
        ["spin on grpc-uds"] = ("spec.wait_strategy", Valid.With(s => { s.Transport = "grpc-uds"; s.WaitStrategy = WaitStrategy.Spin; })),
        ["negative latency sampling"] = ("spec.latency_sample_every", Valid.With(s => s.LatencySampleEvery = -1)),
        ["latency sampling above the maximum"] = ("spec.latency_sample_every", Valid.With(s => s.LatencySampleEvery = 1_000_001)),
        ["publisher CPU list that does not parse"] = ("spec.publisher_cpus", Valid.With(s => s.PublisherCpus = "0-a")),
        ["descending subscriber CPU range"] = ("spec.subscriber_cpus", Valid.With(s => s.SubscriberCpus = "1-0")),
        ["publisher CPU that does not exist"] = ("spec.publisher_cpus", Valid.With(s => s.PublisherCpus = "4095")),
        ["subscriber CPU beyond the kernel's limit"] = ("spec.subscriber_cpus", Valid.With(s => s.SubscriberCpus = "0,9000")),
        ["realtime priority 100"] = ("spec.realtime_priority", Valid.With(s => s.RealtimePriority = 100)),
        ["negative realtime priority"] = ("spec.realtime_priority", Valid.With(s => s.RealtimePriority = -1)),
        ["max noise 0 %"] = ("spec.max_noise_percent", Valid.With(s => s.MaxNoisePercent = 0)),
        ["max noise above 100 %"] = ("spec.max_noise_percent", Valid.With(s => s.MaxNoisePercent = 100.5)),
    };

    public static TheoryData<string> InvalidSpecCases => [.. InvalidSpecs.Keys];

    [Theory]
    [MemberData(nameof(InvalidSpecCases))]
    public async Task StartScenario_RefusesInvalidSpec_NamingTheField(string @case)
    {
        var (field, spec) = InvalidSpecs[@case];
        int before = (await _daemon.ListScenariosAsync()).Count;

        var e = await Assert.ThrowsAsync<RpcException>(() => _daemon.StartScenarioAsync(spec));

        output.WriteLine($"{@case}: {e.StatusCode}: {e.Status.Detail}");
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.StartsWith(field + ": ", e.Status.Detail, StringComparison.Ordinal);
        Assert.Equal(before, (await _daemon.ListScenariosAsync()).Count);
    }

    /// <summary>Refusals quote what was sent; a huge value must not become a status header too large for the client (found by ControlPlaneFuzzTests).</summary>
    [Fact]
    public async Task StartScenario_WithAHugeTransportName_IsInvalidArgument_WithABoundedMessage()
    {
        var e = await Assert.ThrowsAsync<RpcException>(() => _daemon.StartScenarioAsync(Valid.With(s => s.Transport = new string('x', 200_000))));

        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.StartsWith("spec.transport: ", e.Status.Detail, StringComparison.Ordinal);
        Assert.True(e.Status.Detail.Length < 4096, $"{e.Status.Detail.Length} characters");
        Assert.NotEmpty(await _daemon.ListTransportsAsync());
    }

    [Fact]
    public async Task StartScenario_WithoutSpec_IsInvalidArgument()
    {
        var e = await Assert.ThrowsAsync<RpcException>(() =>
            _daemon.Channel.UnaryAsync("/ipcbench.v1.BenchControl/StartScenario", new StartScenarioRequest(), StartScenarioResponse.Parser));

        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
        Assert.StartsWith("spec: ", e.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task UnknownScenarioId_IsNotFound_OnGetStopAndWatch()
    {
        const string id = "0123456789ab";

        var get = await Assert.ThrowsAsync<RpcException>(() => _daemon.GetScenarioAsync(id));
        var stop = await Assert.ThrowsAsync<RpcException>(() => _daemon.StopScenarioAsync(id));
        var watch = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            await foreach (var snapshot in _daemon.WatchScenarioAsync(id))
            {
                Assert.Fail($"WatchScenario of an unknown id streamed {snapshot}");
            }
        });

        Assert.All([get, stop, watch], e =>
        {
            Assert.Equal(StatusCode.NotFound, e.StatusCode);
            Assert.Contains(id, e.Status.Detail, StringComparison.Ordinal);
        });
    }

    [Fact]
    public async Task StopScenario_OfAFinishedScenario_IsOkAndChangesNothing()
    {
        var finished = await _daemon.RunScenarioAsync(Valid);
        new ScenarioExpectations(finished, _daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();

        var afterStop = await _daemon.StopScenarioAsync(finished.Id);

        Assert.Equal(ScenarioState.Completed, afterStop.State);
        Assert.Equal(finished, afterStop);
        Assert.Equal(finished, await _daemon.GetScenarioAsync(finished.Id));
    }
}
