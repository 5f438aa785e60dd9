using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Transports;
using IpcBench.V1;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Rules no shipped transport can trigger end to end (every one of them supports round trip), checked on the
/// daemon's own validator with a transport that cannot.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SpecValidatorTests
{
    private static readonly SpecValidator Validator = new(
        new TransportRegistry([new OneWayOnlyTransport()]),
        Options.Create(new DaemonOptions()));

    private static ScenarioSpec Spec(Mode mode) =>
        Specs.Stream(OneWayOnlyTransport.TransportId, publishers: 1, subscribers: 1, Specs.Seconds(1)).With(s => s.Mode = mode);

    [Fact]
    public void RoundTrip_OnATransportWithoutRoundTrip_IsInvalidArgumentNamingMode()
    {
        var e = Assert.Throws<RequestRefusedException>(() => Validator.Resolve(Spec(Mode.RoundTrip)));

        Assert.Equal(RefusalKind.InvalidArgument, e.Kind);
        Assert.StartsWith("spec.mode: ", e.Message, StringComparison.Ordinal);
        Assert.Contains(OneWayOnlyTransport.TransportId, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Stream_OnTheSameTransport_IsAccepted()
    {
        var resolved = Validator.Resolve(Spec(Mode.Stream));

        Assert.Equal(Mode.Stream, ScenarioProtos.ToProto(resolved.Mode));
        Assert.Equal(WaitMode.Block, resolved.WaitMode);
    }

    /// <summary>Capabilities only: the validator never creates endpoints.</summary>
    private sealed class OneWayOnlyTransport : ITransport
    {
        public const string TransportId = "one-way-only";

        public string Id => TransportId;

        public string Description => "A transport that cannot echo (test double for SpecValidator)";

        public TransportCapabilities Capabilities { get; } = new(
            CrossProcess: true,
            ZeroCopy: false,
            SupportsRoundTrip: false,
            WaitModes: [WaitMode.Block],
            DefaultWaitMode: WaitMode.Block,
            MaxPayloadBytes: 4096);

        public string? UnavailableReason => null;

        public IPublisherEndpoint CreatePublisher(PublisherOptions options) => throw new NotSupportedException();

        public ISubscriberEndpoint CreateSubscriber(SubscriberOptions options, CancellationToken cancellationToken) => throw new NotSupportedException();
    }
}
