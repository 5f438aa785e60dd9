using IpcBench.Iceoryx2.Interop;

namespace IpcBench.Iceoryx2;

/// <summary>
/// An iceoryx2 node (ipc flavour): the owner of services and ports of this process. Creating a node also
/// removes the stale resources of dead nodes. Ports stay valid after the node is disposed (they share its state),
/// but the usual order is: dispose ports, then the node.
/// </summary>
public sealed class Iceoryx2Node : IDisposable
{
    private readonly NodeHandle _handle;

    private Iceoryx2Node(NodeHandle handle, string? name)
    {
        _handle = handle;
        Name = name;
    }

    /// <summary>The node name given at creation (may be null).</summary>
    public string? Name { get; }

    /// <summary>Creates a node. Names need not be unique (iceoryx2 assigns unique ids).</summary>
    public static unsafe Iceoryx2Node Create(string? name = null)
    {
        Iceoryx2Library.EnsureAvailable();
        nint ptr = 0;
        Iceoryx2Library.Check(NativeMethods.iox2b_node_create(name, &ptr));
        return new Iceoryx2Node(new NodeHandle(ptr), name);
    }

    /// <summary>Opens or creates the publish-subscribe service and creates a publisher on it.</summary>
    public unsafe Iceoryx2Publisher CreatePublisher(string serviceName, PublishSubscribeOptions options)
    {
        ArgumentNullException.ThrowIfNull(serviceName);
        ArgumentNullException.ThrowIfNull(options);
        var cfg = options.ToNative();
        nint ptr = 0;
        Iceoryx2Library.Check(NativeMethods.iox2b_publisher_create(Ptr, serviceName, &cfg, &ptr));
        GC.KeepAlive(this);
        return new Iceoryx2Publisher(new PublisherHandle(ptr), serviceName, options);
    }

    /// <summary>Opens or creates the publish-subscribe service and creates a subscriber on it.</summary>
    public unsafe Iceoryx2Subscriber CreateSubscriber(string serviceName, PublishSubscribeOptions options)
    {
        ArgumentNullException.ThrowIfNull(serviceName);
        ArgumentNullException.ThrowIfNull(options);
        var cfg = options.ToNative();
        nint ptr = 0;
        Iceoryx2Library.Check(NativeMethods.iox2b_subscriber_create(Ptr, serviceName, &cfg, &ptr));
        GC.KeepAlive(this);
        return new Iceoryx2Subscriber(new SubscriberHandle(ptr), serviceName);
    }

    /// <summary>Opens or creates the event service and creates a notifier on it.</summary>
    public unsafe Iceoryx2Notifier CreateNotifier(string serviceName, EventOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(serviceName);
        var cfg = (options ?? new EventOptions()).ToNative();
        nint ptr = 0;
        Iceoryx2Library.Check(NativeMethods.iox2b_notifier_create(Ptr, serviceName, &cfg, &ptr));
        GC.KeepAlive(this);
        return new Iceoryx2Notifier(new NotifierHandle(ptr), serviceName);
    }

    /// <summary>Opens or creates the event service and creates a listener on it.</summary>
    public unsafe Iceoryx2Listener CreateListener(string serviceName, EventOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(serviceName);
        var cfg = (options ?? new EventOptions()).ToNative();
        nint ptr = 0;
        Iceoryx2Library.Check(NativeMethods.iox2b_listener_create(Ptr, serviceName, &cfg, &ptr));
        GC.KeepAlive(this);
        return new Iceoryx2Listener(new ListenerHandle(ptr), serviceName);
    }

    public void Dispose() => _handle.Dispose();

    private nint Ptr
    {
        get
        {
            ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
            return _handle.DangerousGetHandle();
        }
    }
}
