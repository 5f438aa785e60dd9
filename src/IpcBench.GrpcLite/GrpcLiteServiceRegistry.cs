using Google.Protobuf.Reflection;

namespace IpcBench.GrpcLite;

/// <summary>The services mapped on this server, which is what reflection describes.</summary>
internal sealed class GrpcLiteServiceRegistry
{
    private readonly Lock _gate = new();
    private readonly List<ServiceDescriptor> _services = [];
    private readonly Dictionary<string, IReadOnlySet<string>> _listeners = new(StringComparer.Ordinal);
    private DescriptorIndex? _index;

    /// <param name="listeners">The listeners that serve it; empty: every listener.</param>
    public void Add(ServiceDescriptor service, IReadOnlySet<string> listeners)
    {
        lock (_gate)
        {
            if (_services.Exists(s => s.FullName == service.FullName))
            {
                throw new InvalidOperationException($"gRPC service '{service.FullName}' is mapped twice; map each service once with all its methods.");
            }

            _services.Add(service);
            _listeners[service.FullName] = listeners.ToHashSet(StringComparer.Ordinal);
            _index = null;
        }
    }

    public bool Contains(string serviceName)
    {
        lock (_gate)
        {
            return _services.Exists(s => s.FullName == serviceName);
        }
    }

    /// <summary>Whether <paramref name="serviceName"/> is served on <paramref name="listener"/>; unknown services count as served (they answer UNIMPLEMENTED anyway).</summary>
    public bool IsServedOn(string serviceName, string? listener)
    {
        lock (_gate)
        {
            return !_listeners.TryGetValue(serviceName, out var listeners) || listeners.Count == 0
                || (listener is not null && listeners.Contains(listener));
        }
    }

    /// <summary>Built on first use after a change; services are mapped at startup, so in practice once.</summary>
    public DescriptorIndex Index
    {
        get
        {
            lock (_gate)
            {
                return _index ??= new DescriptorIndex(_services);
            }
        }
    }
}

/// <summary>Every file reachable from the mapped services, by file name and by the symbols each defines.</summary>
internal sealed class DescriptorIndex
{
    private readonly Dictionary<string, FileDescriptor> _filesByName = new(StringComparer.Ordinal);
    private readonly Dictionary<string, FileDescriptor> _filesBySymbol = new(StringComparer.Ordinal);
    private readonly HashSet<string> _messageTypes = new(StringComparer.Ordinal);

    public DescriptorIndex(IEnumerable<ServiceDescriptor> services)
    {
        ServiceNames = services.Select(s => s.FullName).ToArray();
        foreach (var service in services)
        {
            AddFile(service.File);
        }
    }

    public IReadOnlyList<string> ServiceNames { get; }

    public FileDescriptor? FindFileByName(string name) => _filesByName.GetValueOrDefault(name);

    public FileDescriptor? FindFileContainingSymbol(string symbol) => _filesBySymbol.GetValueOrDefault(symbol);

    public bool IsMessageType(string name) => _messageTypes.Contains(name);

    /// <summary>The file followed by its transitive dependencies, each once: what a reflection client needs to build it.</summary>
    public static IEnumerable<FileDescriptor> WithDependencies(FileDescriptor file)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var pending = new Stack<FileDescriptor>();
        pending.Push(file);
        while (pending.TryPop(out var next))
        {
            if (!seen.Add(next.Name))
            {
                continue;
            }

            yield return next;
            for (var i = next.Dependencies.Count - 1; i >= 0; i--)
            {
                pending.Push(next.Dependencies[i]);
            }
        }
    }

    private void AddFile(FileDescriptor file)
    {
        if (!_filesByName.TryAdd(file.Name, file))
        {
            return;
        }

        foreach (var service in file.Services)
        {
            _filesBySymbol[service.FullName] = file;
            foreach (var method in service.Methods)
            {
                _filesBySymbol[method.FullName] = file;
            }
        }

        foreach (var message in file.MessageTypes)
        {
            AddMessage(message, file);
        }

        foreach (var enumType in file.EnumTypes)
        {
            _filesBySymbol[enumType.FullName] = file;
        }

        foreach (var dependency in file.Dependencies)
        {
            AddFile(dependency);
        }
    }

    private void AddMessage(MessageDescriptor message, FileDescriptor file)
    {
        _filesBySymbol[message.FullName] = file;
        _messageTypes.Add(message.FullName);
        foreach (var nested in message.NestedTypes)
        {
            AddMessage(nested, file);
        }

        foreach (var enumType in message.EnumTypes)
        {
            _filesBySymbol[enumType.FullName] = file;
        }
    }
}
