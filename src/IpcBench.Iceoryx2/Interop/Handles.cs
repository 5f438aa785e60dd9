using System.Runtime.InteropServices;

namespace IpcBench.Iceoryx2.Interop;

/// <summary>Base for the owned native objects: releases them exactly once (Dispose or finalizer).</summary>
internal abstract class Iox2Handle : SafeHandle
{
    protected Iox2Handle(nint existing) : base(0, ownsHandle: true) => SetHandle(existing);

    public override bool IsInvalid => handle == 0;

    protected abstract int Destroy(nint h);

    protected override bool ReleaseHandle() => Destroy(handle) == NativeMethods.Ok;
}

internal sealed class NodeHandle(nint h) : Iox2Handle(h)
{
    protected override int Destroy(nint h) => NativeMethods.iox2b_node_destroy(h);
}

internal sealed class PublisherHandle(nint h) : Iox2Handle(h)
{
    protected override int Destroy(nint h) => NativeMethods.iox2b_publisher_destroy(h);
}

internal sealed class SubscriberHandle(nint h) : Iox2Handle(h)
{
    protected override int Destroy(nint h) => NativeMethods.iox2b_subscriber_destroy(h);
}

internal sealed class NotifierHandle(nint h) : Iox2Handle(h)
{
    protected override int Destroy(nint h) => NativeMethods.iox2b_notifier_destroy(h);
}

internal sealed class ListenerHandle(nint h) : Iox2Handle(h)
{
    protected override int Destroy(nint h) => NativeMethods.iox2b_listener_destroy(h);
}
