using IpcBench.Transports;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Theory data taken from the transport registry, so a transport added there is run through every contract test here
/// without editing them. Transports that cannot run on this machine are left out; their own tests say why (and CI
/// requires iceoryx2 through IPCBENCH_REQUIRE_ICEORYX2).
/// </summary>
internal static class RegisteredTransports
{
    private static IEnumerable<ITransport> Available =>
        TransportRegistry.CreateDefault().All.Where(t => t.UnavailableReason is null);

    /// <summary>Transports whose subscribers run in BenchAgent processes.</summary>
    public static IEnumerable<string> CrossProcessIds => Available.Where(t => t.Capabilities.CrossProcess).Select(t => t.Id);

    public static TheoryData<string> CrossProcess() => new(CrossProcessIds);

    public static TheoryData<string> CrossProcessWithRoundTrip() =>
        new(Available.Where(t => t.Capabilities.CrossProcess && t.Capabilities.SupportsRoundTrip).Select(t => t.Id));
}
