using IpcBench.Transports.Channels;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>
/// The publisher decides which messages are measured (MessageFlags.Measured, from its window) and receivers count only
/// those: the daemon may start the window whenever code generation has settled without telling every receiver first.
/// </summary>
[Collection(nameof(SerialMeasurements))]
public sealed class MeasuredFlagTests
{
    [Fact]
    public void AWindowNeverStarted_MeasuresNothing_ButEverythingArrives()
    {
        var outcome = InProcessLoop.Run(new ChannelsTransport(), 1, 2, payloadBytes: 64, messagesPerPublisher: 5_000, window: new MeasurementWindow());

        Assert.Equal(2 * 5_000, outcome.Received.Received);
        Assert.Equal(0, outcome.Received.MeasuredReceived);
        Assert.Equal(0, outcome.Latency.TotalCount);
    }

    [Fact]
    public void AWindowStartedBeforeTheFirstMessage_MeasuresEveryOne()
    {
        var outcome = InProcessLoop.Run(new ChannelsTransport(), 1, 2, payloadBytes: 64, messagesPerPublisher: 5_000);

        Assert.Equal(2 * 5_000, outcome.Received.MeasuredReceived);
        Assert.Equal(2 * 5_000 * 64, outcome.Received.MeasuredBytes);
    }

    /// <summary>1000 msg/s for 2 s, the window opening 1 s in: messages stamped before it are not measured, those after are.</summary>
    [Fact]
    public void AWindowStartingMidRun_MeasuresTheMessagesStampedFromThenOn()
    {
        var window = new MeasurementWindow();
        window.Start(MonotonicClock.NowNs() + 1_000_000_000);

        var outcome = InProcessLoop.Run(new ChannelsTransport(), 1, 1, payloadBytes: 64, messagesPerPublisher: 2_000, ratePerPublisher: 1_000, window: window);

        Assert.Equal(2_000, outcome.Received.Received);
        // Set-up takes far less than the second before the window opens, so some messages fall on each side.
        Assert.InRange(outcome.Received.MeasuredReceived, 1, 1_999);
        Assert.Equal(outcome.Received.MeasuredReceived, outcome.Latency.TotalCount);
    }

    /// <summary>
    /// In a round trip the publisher times the echoes of the messages it flagged Measured, which are the ones the
    /// subscriber counts. The window opens here the way the daemon opens it, with a start it read a moment before it
    /// published it (1 ms earlier), just after message 1,000 went out unflagged: that message's stamp is past the start,
    /// and re-reading the window when its echo came timed it as well (one sample more than measured messages, seen as
    /// 8,929 against 8,928 in a daemon test).
    /// </summary>
    [Fact]
    public void ARoundTripWindowOpenedWhileAMessageIsInFlight_TimesOnlyTheEchoesOfMeasuredMessages()
    {
        var window = new MeasurementWindow();
        long sent = 0;
        var outcome = InProcessLoop.Run(new ChannelsTransport(), 1, 1, payloadBytes: 64, messagesPerPublisher: 3_000, roundTrip: true, window: window,
            wrapPublisher: inner => new AfterSendPublisher(inner, () =>
            {
                if (sent++ == 1_000)
                {
                    window.Start(MonotonicClock.NowNs() - 1_000_000);
                }
            }));

        Assert.Equal(3_000, outcome.Received.Received);
        Assert.Equal(1_999, outcome.Received.MeasuredReceived);
        Assert.Equal(outcome.Received.MeasuredReceived, outcome.Latency.TotalCount);
    }
}
