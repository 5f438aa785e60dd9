using IpcBench.Transports.SharedMemory;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>
/// A subscriber is built from the set-up the daemon resolved, as it is: an agent derives nothing (no size formula, no
/// wait-mode fallback, no directory of its own) and reads no environment for its transport's settings.
/// </summary>
[Collection(nameof(LightRuns))]
public sealed class SubscriberSetupTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-setup-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private SubscriberSetup Setup(string transport = "shm-ring") => new()
    {
        Transport = transport,
        ScenarioKey = "k1",
        SubscriberIndex = 2,
        Publishers = { new PublisherEndpoint { PublisherIndex = 1, Address = "/somewhere/p1" } },
        TotalPublishers = 3,
        TotalSubscribers = 4,
        // Deliberately not header + payload: whatever the daemon says is what is used.
        MessageBytes = 1000,
        PayloadBytes = 8,
        WaitStrategy = WaitStrategy.Spin,
        Mode = Mode.RoundTrip,
        PayloadAccess = PayloadAccess.HeaderOnly,
        RuntimeDirectory = Path.Combine(_directory, "run"),
        OwnerPid = 4711,
        SharedMemoryDirectory = _directory,
        TransportSettings = { ["RingBytes"] = "262144" },
    };

    [Fact]
    public void The_options_and_plan_are_the_set_up_field_by_field()
    {
        var setup = Setup();

        var options = setup.ToOptions();
        var plan = setup.ToPlan();

        Assert.Equal(new TransportEnvironment(Path.Combine(_directory, "run"), 4711), options.Environment);
        Assert.Equal("k1", options.ScenarioKey);
        Assert.Equal(2, options.SubscriberIndex);
        Assert.Equal([new PublisherAddress(1, "/somewhere/p1")], options.Publishers);
        Assert.Equal((3, 4), (options.TotalPublishers, options.TotalSubscribers));
        Assert.Equal(1000, options.MaxMessageBytes);
        Assert.Equal(WaitMode.Spin, options.WaitMode);
        Assert.True(options.RoundTrip);
        Assert.Equal(new SubscriberPlan(PayloadBytes: 8, FullPayload: false, RoundTrip: true, TotalPublishers: 3), plan);
    }

    [Fact]
    public void The_transport_is_configured_from_the_set_up_alone()
    {
        var transport = Assert.IsType<ShmRingTransport>(Setup().CreateTransport());

        Assert.Equal(_directory, transport.Settings.Directory);
        Assert.Equal(262144, transport.Settings.RingBytes);
    }

    [Theory]
    [InlineData("wait_strategy")]
    [InlineData("mode")]
    [InlineData("payload_access")]
    public void An_unresolved_value_is_refused_not_guessed(string field)
    {
        var setup = Setup();
        switch (field)
        {
            case "wait_strategy": setup.WaitStrategy = WaitStrategy.Unspecified; break;
            case "mode": setup.Mode = Mode.Unspecified; break;
            default: setup.PayloadAccess = PayloadAccess.Unspecified; break;
        }

        var e = Assert.Throws<ArgumentException>(() => (setup.ToOptions(), setup.ToPlan()));
        Assert.Contains($"set-up's {field} is ", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_subscriber_built_from_a_set_up_connects_to_a_ring_in_its_shared_memory_directory()
    {
        var setup = Setup();
        setup.Mode = Mode.Stream;
        setup.PayloadAccess = PayloadAccess.Full;
        setup.WaitStrategy = WaitStrategy.Yield;
        setup.TotalPublishers = 1;
        setup.TotalSubscribers = 1;
        setup.SubscriberIndex = 0;
        setup.PayloadBytes = 64;
        setup.MessageBytes = MessageHeader.Size + 64;
        var daemonSide = TransportRegistry.CreateDefault(new TransportSettings(_directory)).Find("shm-ring")!;
        using var publisher = daemonSide.CreatePublisher(new PublisherOptions(new TransportEnvironment(setup.RuntimeDirectory, Environment.ProcessId),
            setup.ScenarioKey, 0, 1, 1, 1, setup.MessageBytes, WaitMode.Yield, false));
        setup.Publishers.Clear();
        setup.Publishers.Add(new PublisherEndpoint { PublisherIndex = 0, Address = publisher.Address });

        using var host = SubscriberHost.Connect(setup.CreateTransport(), setup, CancellationToken.None);
        publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(10), CancellationToken.None);

        Assert.StartsWith(_directory + Path.DirectorySeparatorChar, publisher.Address, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => SubscriberHost.Connect(new ShmRingTransport(), Setup("uds"), CancellationToken.None));
    }
}
