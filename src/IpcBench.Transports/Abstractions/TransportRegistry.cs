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

    /// <summary>
    /// Every transport this build ships. Adding a transport means adding its folder and one line here; a transport with
    /// settings takes <paramref name="settings"/> and binds its own section (IpcBench:Transports:&lt;id&gt;) from it.
    /// </summary>
    /// <exception cref="TransportSettingsException">A setting is out of range, or a section names no transport.</exception>
    public static TransportRegistry CreateDefault(TransportSettings? settings = null)
    {
        settings ??= new TransportSettings();
        var registry = new TransportRegistry(
        [
            new Channels.ChannelsTransport(),
            new NamedPipes.NamedPipesTransport(),
            new UnixSockets.UnixSocketsTransport(),
            new Tcp.TcpTransport(),
            new SharedMemory.ShmRingTransport(settings),
            new Iceoryx2.Iceoryx2Transport(settings),
            new GrpcUds.GrpcUdsTransport(),
            new ZeroMq.ZeroMqTransport(),
        ]);
        var unknown = settings.Configured.Where(id => registry.Find(id) is null).ToList();
        if (unknown.Count > 0)
        {
            var known = string.Join(", ", registry.All.Select(t => t.Id));
            throw new TransportSettingsException(unknown.Select(id => $"{TransportSettings.SectionPath}:{id}: not a transport; one of: {known}"));
        }

        return registry;
    }
}
