namespace IpcBench.Transports.ZeroMq;

/// <summary>A subscriber: one DEALER, hence one receiver, per publisher it reads.</summary>
internal sealed class ZeroMqSubscriberEndpoint(List<ZeroMqReceiver> receivers) : ISubscriberEndpoint
{
    public IReadOnlyList<IMessageReceiver> Receivers => receivers;

    public static ZeroMqSubscriberEndpoint Connect(SubscriberOptions options, CancellationToken cancellationToken)
    {
        var receivers = new List<ZeroMqReceiver>(options.Publishers.Count);
        try
        {
            foreach (var publisher in options.Publishers)
            {
                receivers.Add(ZeroMqReceiver.Connect(publisher, options, cancellationToken));
            }
        }
        catch
        {
            receivers.ForEach(r => r.Close());
            throw;
        }

        return new ZeroMqSubscriberEndpoint(receivers);
    }

    /// <summary>From any thread: each receiver's socket closes once its thread has left it (within a wait slice).</summary>
    public void Dispose() => receivers.ForEach(r => r.Close());
}
