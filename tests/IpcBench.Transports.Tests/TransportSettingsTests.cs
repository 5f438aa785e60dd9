using IpcBench.Transports;
using IpcBench.Transports.Iceoryx2;
using IpcBench.Transports.SharedMemory;

namespace IpcBench.Transports.Tests;

/// <summary>
/// Transport settings come from configuration (IpcBench:SharedMemoryDirectory and IpcBench:Transports:&lt;id&gt;), never
/// from the environment: bound into each transport's own settings type and refused, naming the key and the allowed
/// range, when they cannot be used.
/// </summary>
[Collection(nameof(LightRuns))]
public sealed class TransportSettingsTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-shm-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static TransportSettings Settings(string transport, Dictionary<string, string> values, string directory = TransportSettings.DefaultSharedMemoryDirectory) =>
        new(directory, [new(transport, values)]);

    [Fact]
    public void Defaults_are_the_settings_types_own()
    {
        var registry = TransportRegistry.CreateDefault(new TransportSettings());

        Assert.Equal(new ShmRingSettings(), ((ShmRingTransport)registry.Find("shm-ring")!).Settings);
        Assert.Equal(new Iceoryx2Settings(), ((Iceoryx2Transport)registry.Find("iceoryx2")!).Settings);
    }

    [Fact]
    public void A_transports_section_is_bound_into_its_settings()
    {
        var registry = TransportRegistry.CreateDefault(new TransportSettings(TransportSettings.DefaultSharedMemoryDirectory,
        [
            new("shm-ring", new Dictionary<string, string> { ["RingBytes"] = "65536", ["slotdatabytes"] = "1024", ["StallTimeout"] = "00:00:02" }),
            new("iceoryx2", new Dictionary<string, string> { ["SendTimeout"] = "00:00:00.300", ["MaxBytesPerPublisher"] = "1048576" }),
        ]));

        var ring = ((ShmRingTransport)registry.Find("shm-ring")!).Settings;
        Assert.Equal(65536, ring.RingBytes);
        Assert.Equal(1024, ring.SlotDataBytes);
        Assert.Equal(TimeSpan.FromSeconds(2), ring.StallTimeout);
        var iceoryx2 = ((Iceoryx2Transport)registry.Find("iceoryx2")!).Settings;
        Assert.Equal(TimeSpan.FromMilliseconds(300), iceoryx2.SendTimeout);
        Assert.Equal(1048576, iceoryx2.MaxBytesPerPublisher);
    }

    [Theory]
    [InlineData("shm-ring", "RingBytes", "5", "must be between 2048 and 1073741824; got 5")]
    [InlineData("shm-ring", "SlotDataBytes", "63", "must be between 64 and 67108896; got 63")]
    [InlineData("shm-ring", "MaxSlots", "1", "must be between 2 and 1048576; got 1")]
    [InlineData("iceoryx2", "MaxQueueDepth", "1", "must be between 2 and 65536; got 1")]
    [InlineData("iceoryx2", "SendTimeout", "00:00:00", "must be between 00:00:00.0010000 and 1.00:00:00; got 00:00:00")]
    public void A_value_out_of_range_is_refused_naming_its_key_and_the_range(string transport, string setting, string value, string expected)
    {
        var e = Assert.Throws<TransportSettingsException>(() => TransportRegistry.CreateDefault(Settings(transport, new() { [setting] = value })));

        Assert.StartsWith($"IpcBench:Transports:{transport}:{setting}: ", e.Message, StringComparison.Ordinal);
        Assert.True(e.Message.Contains(expected, StringComparison.Ordinal), e.Message);
    }

    [Fact]
    public void A_slot_that_does_not_fit_twice_into_the_ring_is_refused_naming_both()
    {
        var e = Assert.Throws<TransportSettingsException>(() => TransportRegistry.CreateDefault(
            Settings("shm-ring", new() { ["RingBytes"] = "65536", ["SlotDataBytes"] = "40000" })));

        Assert.Equal("IpcBench:Transports:shm-ring:SlotDataBytes: must fit twice into RingBytes (65536); got 40000", e.Message);
    }

    [Fact]
    public void An_unreadable_value_is_refused_naming_its_section()
    {
        var e = Assert.Throws<TransportSettingsException>(() => TransportRegistry.CreateDefault(Settings("shm-ring", new() { ["RingBytes"] = "lots" })));

        Assert.StartsWith("IpcBench:Transports:shm-ring: ", e.Message, StringComparison.Ordinal);
        Assert.Contains("RingBytes", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("RingBytez")]
    [InlineData("Directory")] // not a setting of its own: the one shared-memory directory is
    public void An_unknown_setting_is_refused_listing_the_known_ones(string setting)
    {
        var e = Assert.Throws<TransportSettingsException>(() => TransportRegistry.CreateDefault(Settings("shm-ring", new() { [setting] = "1" })));

        Assert.Equal($"IpcBench:Transports:shm-ring:{setting}: not a setting of shm-ring; known: SlotDataBytes, RingBytes, MaxSlots, StallTimeout", e.Message);
    }

    [Fact]
    public void A_section_for_no_transport_is_refused()
    {
        var e = Assert.Throws<TransportSettingsException>(() => TransportRegistry.CreateDefault(Settings("shm_ring", new() { ["RingBytes"] = "65536" })));

        Assert.StartsWith("IpcBench:Transports:shm_ring: not a transport; one of: channels, ", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Shm_ring_creates_its_rings_in_the_shared_memory_directory()
    {
        var transport = TransportRegistry.CreateDefault(new TransportSettings(_directory)).Find("shm-ring")!;
        Assert.Null(transport.UnavailableReason);

        var options = new PublisherOptions(new TransportEnvironment(_directory, Environment.ProcessId), "dir1", 0, 1, 1, 1, 64, WaitMode.Yield, false);
        using (var publisher = transport.CreatePublisher(options))
        {
            Assert.Equal(_directory, Path.GetDirectoryName(publisher.Address));
            Assert.Single(Directory.GetFiles(_directory, ShmRingTransport.FilePrefix + "*"));
        }

        Assert.Empty(Directory.GetFiles(_directory, ShmRingTransport.FilePrefix + "*"));
    }

    [Fact]
    public void Iceoryx2_is_unavailable_with_a_shared_memory_directory_it_cannot_use()
    {
        var elsewhere = TransportRegistry.CreateDefault(new TransportSettings(_directory)).Find("iceoryx2")!;
        var devShm = TransportRegistry.CreateDefault(new TransportSettings("/dev/shm/")).Find("iceoryx2")!;

        Assert.NotNull(elsewhere.UnavailableReason);
        Assert.Equal(new Iceoryx2Transport().UnavailableReason, devShm.UnavailableReason);
        if (devShm.UnavailableReason is null)
        {
            Assert.Contains($"not in the configured shared-memory directory {_directory} (IpcBench:SharedMemoryDirectory)", elsewhere.UnavailableReason, StringComparison.Ordinal);
        }
    }
}
