using Grpc.Core;
using IpcBench.Daemon.Agents;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Transports;
using IpcBench.Transports.Iceoryx2;
using IpcBench.Transports.SharedMemory;
using IpcBench.V1;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Transport settings are daemon configuration (IpcBench:SharedMemoryDirectory, IpcBench:Transports:&lt;id&gt;), checked
/// at start-up; the daemon resolves each subscriber's set-up once and agents use it as sent.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class TransportConfigurationTests(ITestOutputHelper output)
{
    public static TheoryData<string, string[]> Refusals => new()
    {
        { "out of range", ["--IpcBench:Transports:shm-ring:RingBytes=5"] },
        { "unknown setting", ["--IpcBench:Transports:iceoryx2:SendTimeoutMs=5"] },
        { "unknown transport", ["--IpcBench:Transports:shm_ring:RingBytes=65536"] },
        { "payload beyond what transports carry", ["--IpcBench:MaxPayloadBytes=67108865"] },
    };

    /// <summary>One daemon per refusal case, started together when the first case asks.</summary>
    private static readonly RefusingDaemons RefusingDaemons = new(() =>
        Refusals.ToDictionary(row => (string)row[0], row => new DaemonSettings { Configuration = (string[])row[1] }));

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task BadTransportSettings_RefuseToStart_NamingTheKeyAndWhatItAllows(string @case, string[] configuration)
    {
        var (exitCode, text) = await RefusingDaemons.ResultAsync(@case);

        output.WriteLine($"{@case} ({string.Join(' ', configuration)}):\n{text}");
        Assert.Equal(2, exitCode);
        string expected = @case switch
        {
            "out of range" => "IpcBench:Transports:shm-ring:RingBytes: The field RingBytes must be between 2048 and 1073741824; got 5",
            "unknown setting" => "IpcBench:Transports:iceoryx2:SendTimeoutMs: not a setting of iceoryx2; known: QueueBytesPerSubscriber, MaxQueueDepth, " +
                "MaxBytesPerPublisher, SendTimeout, BlockWaitSlice, ConnectTimeout",
            "unknown transport" => "IpcBench:Transports:shm_ring: not a transport; one of: channels,",
            _ => "The field MaxPayloadBytes must be between 1 and 67108864",
        };
        Assert.Contains(expected, text, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", text, StringComparison.Ordinal);
    }

    /// <summary>appsettings.json lists every transport setting, with the values the settings types default to.</summary>
    [Fact]
    public void TheShippedAppsettings_HoldTheDefaults_AndPassTheValidator()
    {
        var configuration = new ConfigurationBuilder()
            .AddJsonFile(Path.Combine(RepoLayout.Root, "src", "BenchDaemon", "appsettings.json"))
            .Build();
        var shipped = new DaemonOptions();
        configuration.GetSection(DaemonOptions.SectionName).Bind(shipped);

        Assert.True(new TransportSettingsValidator().Validate(null, shipped).Succeeded);
        Assert.Equal(new DaemonOptions().SharedMemoryDirectory, shipped.SharedMemoryDirectory);
        Assert.Equal(new DaemonOptions().MaxPayloadBytes, shipped.MaxPayloadBytes);
        var registry = TransportRegistry.CreateDefault(shipped.TransportSettings());
        Assert.Equal(new ShmRingSettings(), ((ShmRingTransport)registry.Find("shm-ring")!).Settings);
        Assert.Equal(new Iceoryx2Settings(), ((Iceoryx2Transport)registry.Find("iceoryx2")!).Settings);
        Assert.Equal(
            typeof(ShmRingSettings).GetProperties().Where(p => p.SetMethod is { IsPublic: true }).Select(p => p.Name).Order(),
            shipped.Transports["shm-ring"].Keys.Order());

        shipped.Transports["shm-ring"]["RingBytes"] = "1";
        Assert.True(new TransportSettingsValidator().Validate(null, shipped).Failed);
    }

    /// <summary>One shared-memory directory: admission control measures the one the rings are created in.</summary>
    [Fact]
    public async Task SharedMemoryDirectory_IsWhereRingsAreCreated_AndWhatAdmissionControlChecks()
    {
        // A directory of its own on the tmpfs (tens of GiB at most), so 64 rings of 1 GiB cannot fit it.
        var directory = Path.Combine("/dev/shm", "ipcbench-tests-" + Guid.NewGuid().ToString("N")[..10]);
        Directory.CreateDirectory(directory);
        try
        {
            await using var daemon = await DaemonProcess.StartAsync(
                $"--IpcBench:SharedMemoryDirectory={directory}",
                "--IpcBench:Transports:shm-ring:RingBytes=1073741824",
                "--IpcBench:Transports:shm-ring:MaxSlots=1048576");
            using var log = daemon.LogTo(output);

            var running = await daemon.StartScenarioAsync(Specs.Stream("shm-ring", publishers: 1, subscribers: 1, duration: null).Paced());
            await daemon.WaitForStateAsync(running.Id, ScenarioState.Running, TimeSpan.FromSeconds(60));
            var rings = Directory.GetFiles(directory, $"ipcbench.ring.{daemon.Pid}.*");
            Assert.Single(rings);
            Assert.Empty(Directory.GetFiles("/dev/shm", $"ipcbench.ring.{daemon.Pid}.*"));
            var stopped = await daemon.StopScenarioAsync(running.Id);
            new ScenarioExpectations(stopped, daemon)
                .That(stopped.Stats is { MessagesLost: 0, MessagesCorrupted: 0, MessagesDuplicated: 0 }, "nothing lost, corrupted or duplicated")
                .Verify();

            var huge = Specs.Stream("shm-ring", publishers: 64, subscribers: 1, duration: null, payloadBytes: 1024 * 1024);
            var e = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(huge));
            output.WriteLine(e.Status.Detail);
            Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
            Assert.Matches($@"^this scenario needs \d+\.\d MiB \(\d+ B\) of shared memory but {directory} has \d+\.\d MiB \(\d+ B\) free; ", e.Status.Detail);
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    /// <summary>What the daemon sends an agent: everything resolved, its own directories, its transport's section.</summary>
    [Fact]
    public void TheDaemon_ResolvesTheSubscribersSetUp_Once()
    {
        var options = new DaemonOptions { SharedMemoryDirectory = "/dev/shm" };
        options.Transports["shm-ring"] = new() { ["RingBytes"] = "262144" };
        options.Transports["iceoryx2"] = new() { ["SendTimeout"] = "00:00:01" };
        var validator = new SpecValidator(TransportRegistry.CreateDefault(options.TransportSettings()), Options.Create(options));
        var spec = validator.Resolve(Specs.Stream("shm-ring", publishers: 2, subscribers: 3, Specs.Seconds(1), payloadBytes: 1000)
            .With(s => s.Topology = Topology.AllToAll));
        var environment = new TransportEnvironment("/run/ipcbench/4711", 4711);

        var setup = SubscriberSetupResolver.Resolve(spec, environment, options, "key1", 2, [new PublisherAddress(0, "a0"), new PublisherAddress(1, "a1")]);

        Assert.Equal("shm-ring", setup.Transport);
        Assert.Equal("key1", setup.ScenarioKey);
        Assert.Equal(2, setup.SubscriberIndex);
        Assert.Equal(["a0", "a1"], setup.Publishers.Select(p => p.Address));
        Assert.Equal((2, 3), (setup.TotalPublishers, setup.TotalSubscribers));
        Assert.Equal((MessageHeader.Size + 1000, 1000), (setup.MessageBytes, setup.PayloadBytes));
        Assert.Equal(WaitStrategy.Yield, setup.WaitStrategy); // shm-ring's default, resolved
        Assert.Equal((Mode.Stream, PayloadAccess.Full), (setup.Mode, setup.PayloadAccess));
        Assert.Equal(("/run/ipcbench/4711", 4711), (setup.RuntimeDirectory, setup.OwnerPid));
        Assert.Equal("/dev/shm", setup.SharedMemoryDirectory);
        Assert.Equal(new Dictionary<string, string> { ["RingBytes"] = "262144" }, setup.TransportSettings);
    }
}
