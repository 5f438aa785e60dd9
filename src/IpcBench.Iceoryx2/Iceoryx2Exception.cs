namespace IpcBench.Iceoryx2;

/// <summary>Error categories reported by the native binding (values are the native status codes).</summary>
public enum Iceoryx2ErrorCode
{
    /// <summary>libipcbench_iox2.so could not be loaded (see <see cref="Iceoryx2Library.UnavailableReason"/>).</summary>
    LibraryUnavailable = -1000,
    InvalidArgument = -1,
    /// <summary>A Rust panic was caught at the FFI boundary.</summary>
    Panic = -2,
    NodeCreationFailed = -3,
    ServiceOpenFailed = -4,
    /// <summary>The existing service was created with another configuration (delivery mode, type, ...).</summary>
    ServiceIncompatible = -5,
    /// <summary>The existing service supports fewer publishers/subscribers/nodes than requested.</summary>
    ServiceCapacityExceeded = -6,
    /// <summary>The service already has its maximum number of publishers/subscribers/notifiers/listeners.</summary>
    PortLimitExceeded = -7,
    PortCreationFailed = -8,
    /// <summary>The payload is larger than the publisher's <see cref="PublishSubscribeOptions.MaxMessageSize"/>.</summary>
    PayloadTooLarge = -9,
    /// <summary>Too many outstanding loans or the publisher's memory is exhausted.</summary>
    LoanFailed = -10,
    SendFailed = -11,
    /// <summary>No-loss mode with a send timeout: a subscriber's buffer stayed full too long.</summary>
    DeliveryTimeout = -12,
    ReceiveFailed = -13,
    /// <summary>The subscriber holds its maximum number of samples; release one first.</summary>
    ExceedsMaxBorrows = -14,
    /// <summary>A loan/sample token was already sent or released.</summary>
    InvalidToken = -15,
    ConnectionFailed = -16,
    EventFailed = -17,
    BufferTooSmall = -18,
    CleanupFailed = -19,
    Internal = -20,
}

/// <summary>An error reported by iceoryx2 or the native binding; <see cref="Exception.Message"/> carries the native text.</summary>
public sealed class Iceoryx2Exception : Exception
{
    public Iceoryx2Exception(Iceoryx2ErrorCode code, string message) : base(message) => ErrorCode = code;

    public Iceoryx2Exception(Iceoryx2ErrorCode code, string message, Exception inner) : base(message, inner) => ErrorCode = code;

    public Iceoryx2ErrorCode ErrorCode { get; }
}
