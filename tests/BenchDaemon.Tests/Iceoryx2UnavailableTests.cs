using Grpc.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A daemon that cannot load the iceoryx2 binding: the transport is listed unavailable with the reason and refused,
/// everything else runs. No iceoryx2 scenario ever runs and the uds one is paced, so the class is in the light lane
/// (it was 8 s of the measuring lane's Iceoryx2ScenarioTests).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class Iceoryx2UnavailableTests(ITestOutputHelper output)
{
    private const string Transport = "iceoryx2";

    [Fact]
    public async Task WithoutItsNativeLibrary_Iceoryx2IsReportedUnavailable_AndRefusedWithTheReason()
    {
        // The daemon (and the agents it would start, through their set-up) then cannot load libipcbench_iox2.so.
        await using var daemon = await DaemonProcess.StartAsync("--IpcBench:Transports:iceoryx2:LibraryPath=/nonexistent/libipcbench_iox2.so");
        using var log = daemon.LogTo(output);
        var transports = await daemon.ListTransportsAsync();
        var info = transports.Single(t => t.Id == Transport);
        Assert.False(info.Available);
        Assert.Contains("libipcbench_iox2.so", info.UnavailableReason, StringComparison.Ordinal);
        Assert.True(info.CrossProcess);
        Assert.True(info.ZeroCopy);
        Assert.Contains(transports, t => t.Id == "uds" && t.Available);

        var refused = await Assert.ThrowsAsync<RpcException>(() => daemon.StartScenarioAsync(Specs.Stream(Transport, 1, 1, Specs.Seconds(1))));
        Assert.Equal(StatusCode.FailedPrecondition, refused.StatusCode);
        Assert.Contains("not available", refused.Message, StringComparison.Ordinal);
        Assert.Contains("libipcbench_iox2.so", refused.Message, StringComparison.Ordinal);

        // Everything else still runs.
        var uds = await daemon.RunScenarioAsync(Specs.Stream("uds", 1, 1, Specs.Milliseconds(300)).Paced());
        new ScenarioExpectations(uds, daemon).CompletedWithoutLoss(subscribersPerPublisher: 1).Verify();
    }
}
