using IpcBench.Daemon.Control;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;

namespace IpcBench.Daemon.Tests;

/// <summary>The service names the daemon writes out (so it need not build the descriptors to route and log) are the .proto's.</summary>
[Collection(LightCollection.Name)]
public sealed class ControlPlaneServicesTests
{
    [Fact]
    public void TheWrittenOutNames_AreTheDescriptorsFullNames()
    {
        Assert.Equal(ControlPlaneServices.BenchControl, BenchControl.Descriptor.FullName);
        Assert.Equal(ControlPlaneServices.AgentLink, AgentLink.Descriptor.FullName);
    }
}
