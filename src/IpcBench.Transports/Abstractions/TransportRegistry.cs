namespace IpcBench.Transports;

/// <summary>The transports a process knows, by id. Registration order is the order users see them in.</summary>
public sealed class TransportRegistry
{
    private readonly List<ITransport> _transports = [];

    public TransportRegistry(IEnumerable<ITransport> transports)
    {
        foreach (var transport in transports)
        {
            if (Find(transport.Id) is not null)
            {
                throw new ArgumentException($"Transport id '{transport.Id}' is registered twice.", nameof(transports));
            }

            _transports.Add(transport);
        }
    }

    public IReadOnlyList<ITransport> All => _transports;

    public ITransport? Find(string id) =>
        _transports.FirstOrDefault(t => string.Equals(t.Id, id, StringComparison.Ordinal));

    /// <summary>Every transport this build ships. Adding a transport means adding its folder and one line here.</summary>
    public static TransportRegistry CreateDefault() => new(
    [
        new Channels.ChannelsTransport(),
        new NamedPipes.NamedPipesTransport(),
        new UnixSockets.UnixSocketsTransport(),
        new Tcp.TcpTransport(),
        new SharedMemory.ShmRingTransport(),
        new Iceoryx2.Iceoryx2Transport(),
        new GrpcUds.GrpcUdsTransport(),
        new ZeroMq.ZeroMqTransport(),
    ]);
}
