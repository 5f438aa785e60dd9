namespace IpcBench.Daemon.Core;

/// <summary>Why the engine refused a request; the control plane turns each kind into the matching gRPC status.</summary>
public enum RefusalKind
{
    /// <summary>The request itself is wrong, whatever the daemon's state.</summary>
    InvalidArgument,

    /// <summary>It names a scenario the daemon does not know.</summary>
    NotFound,

    /// <summary>Valid, but the daemon or the named scenario is not in a state to do it (e.g. a transport is unavailable here).</summary>
    FailedPrecondition,

    /// <summary>A limit (concurrent scenarios, agents, shared memory) would be exceeded.</summary>
    ResourceExhausted,

    /// <summary>The caller did not prove it may do this (an agent with a wrong token).</summary>
    PermissionDenied,

    /// <summary>Worth retrying later: the daemon is shutting down, or its database cannot be read right now.</summary>
    Unavailable,
}

/// <summary>
/// A request the engine will not carry out, and why, in words for the caller. The engine knows nothing of gRPC: this is
/// its answer, and the control plane's one interceptor maps it to a status (Control/RefusalInterceptor).
/// </summary>
public sealed class RequestRefusedException : Exception
{
    /// <param name="field">The request field at fault (spec.transport, ids[1], ...); null when no single field is.</param>
    public RequestRefusedException(RefusalKind kind, string? field, string reason)
        : base(field is null ? reason : $"{field}: {reason}")
    {
        Kind = kind;
        Field = field;
    }

    public RefusalKind Kind { get; }

    public string? Field { get; }
}
