using NetMQ;
using NetMQ.Sockets;

namespace IpcBench.Transports.ZeroMq;

/// <summary>How both ends configure their sockets: queue bounds, no linger, and the hello a subscriber announces itself with.</summary>
internal static class ZeroMqSockets
{
    /// <summary>ZeroMQ's usual default; enough to keep the I/O thread busy while the application thread works.</summary>
    public const int MaxHighWatermark = 1000;

    /// <summary>
    /// At least two messages per queue, so a large message can be in flight while the next one is queued. A ZeroMQ HWM
    /// of 0 would mean unbounded, which is exactly what must never happen.
    /// </summary>
    public const int MinHighWatermark = 2;

    /// <summary>The bytes one queue may hold: the HWM counts messages, so 1000 messages of 64 MiB would be 64 GB.</summary>
    public const long QueueBudgetBytes = 16L * 1024 * 1024;

    /// <summary>What a subscriber's DEALER sends first, so the publisher's ROUTER learns its identity.</summary>
    public static ReadOnlySpan<byte> Hello => "ipcbench-hello"u8;

    /// <summary>
    /// Messages a queue holds at most. In this pattern the HWM only bounds queues: ROUTER_MANDATORY makes a send to a
    /// full peer wait, never drop (ZeroMqTransportTests verifies it).
    /// </summary>
    public static int HighWatermark(int maxMessageBytes) =>
        (int)Math.Clamp(QueueBudgetBytes / Math.Max(1, maxMessageBytes), MinHighWatermark, MaxHighWatermark);

    public static RouterSocket NewRouter(int maxMessageBytes)
    {
        var router = new RouterSocket();
        Configure(router, maxMessageBytes);

        // Without it a ROUTER drops what it cannot route at once: a full peer's messages and unknown identities.
        router.Options.RouterMandatory = true;
        return router;
    }

    public static DealerSocket NewDealer(int maxMessageBytes)
    {
        var dealer = new DealerSocket();
        Configure(dealer, maxMessageBytes);
        return dealer;
    }

    private static void Configure(NetMQSocket socket, int maxMessageBytes)
    {
        int hwm = HighWatermark(maxMessageBytes);
        socket.Options.SendHighWatermark = hwm;
        socket.Options.ReceiveHighWatermark = hwm;

        // Closing must never wait for queued messages: a stalled or dead peer would keep them forever.
        socket.Options.Linger = TimeSpan.Zero;
    }
}
