using Google.Protobuf;
using Google.Protobuf.Reflection;

namespace IpcBench.GrpcLite;

/// <summary>
/// Binds handlers to the methods of one service. Every registration is checked against the descriptor
/// (name, streaming kind, request and response types) so a mismatch fails at startup, not on the first call.
/// </summary>
public sealed class GrpcLiteServiceBuilder
{
    private readonly List<MethodRegistration> _methods = [];

    internal GrpcLiteServiceBuilder(ServiceDescriptor service)
    {
        Service = service;
    }

    public ServiceDescriptor Service { get; }

    internal IReadOnlyList<MethodRegistration> Methods => _methods;

    /// <summary>The listeners the service is confined to; empty: every listener.</summary>
    internal IReadOnlySet<string> Listeners => _listeners;

    private readonly HashSet<string> _listeners = new(StringComparer.Ordinal);

    /// <summary>
    /// Serves the service only on the named listeners (<see cref="GrpcLiteListenOptions.Name"/>): elsewhere its methods
    /// answer UNIMPLEMENTED and reflection does not list it. Without this call the service is served on every listener.
    /// </summary>
    public GrpcLiteServiceBuilder OnlyOnListeners(params string[] listeners)
    {
        ArgumentNullException.ThrowIfNull(listeners);
        foreach (var listener in listeners)
        {
            ArgumentException.ThrowIfNullOrEmpty(listener, nameof(listeners));
            _listeners.Add(listener);
        }

        return this;
    }

    public GrpcLiteServiceBuilder Unary<TRequest, TResponse>(string method, Func<TRequest, GrpcCallContext, Task<TResponse>> handler)
        where TRequest : class, IMessage<TRequest>, new()
        where TResponse : class, IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(handler);
        var descriptor = Resolve<TRequest, TResponse>(method, MethodKind.Unary);
        var parser = new MessageParser<TRequest>(() => new TRequest());
        _methods.Add(new MethodRegistration(descriptor, async call =>
        {
            var request = await call.ReadSingleMessageAsync(parser);
            var response = await handler(request, call.Context)
                ?? throw new InvalidOperationException($"The handler for {descriptor.FullName} returned null instead of a response message.");
            call.WriteMessage(response);
        }));
        return this;
    }

    public GrpcLiteServiceBuilder ServerStreaming<TRequest, TResponse>(string method, Func<TRequest, IServerStreamWriter<TResponse>, GrpcCallContext, Task> handler)
        where TRequest : class, IMessage<TRequest>, new()
        where TResponse : class, IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(handler);
        var descriptor = Resolve<TRequest, TResponse>(method, MethodKind.ServerStreaming);
        var parser = new MessageParser<TRequest>(() => new TRequest());
        _methods.Add(new MethodRegistration(descriptor, async call =>
        {
            var request = await call.ReadSingleMessageAsync(parser);
            await handler(request, new ServerStreamWriter<TResponse>(call), call.Context);
        }));
        return this;
    }

    /// <summary>Bidirectional streaming: requests arrive as they are sent and responses may be written at any time.</summary>
    public GrpcLiteServiceBuilder DuplexStreaming<TRequest, TResponse>(string method, Func<IAsyncEnumerable<TRequest>, IServerStreamWriter<TResponse>, GrpcCallContext, Task> handler)
        where TRequest : class, IMessage<TRequest>, new()
        where TResponse : class, IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(handler);
        var descriptor = Resolve<TRequest, TResponse>(method, MethodKind.DuplexStreaming);
        var parser = new MessageParser<TRequest>(() => new TRequest());
        _methods.Add(new MethodRegistration(descriptor, call =>
            handler(call.ReadAllMessagesAsync(parser), new ServerStreamWriter<TResponse>(call), call.Context)));
        return this;
    }

    private MethodDescriptor Resolve<TRequest, TResponse>(string method, MethodKind kind)
    {
        ArgumentException.ThrowIfNullOrEmpty(method);
        var descriptor = Service.FindMethodByName(method)
            ?? throw new ArgumentException(
                $"Service {Service.FullName} has no method '{method}'. Its methods are: {string.Join(", ", Service.Methods.Select(m => m.Name))}.",
                nameof(method));

        var actualKind = KindOf(descriptor);
        if (actualKind != kind)
        {
            throw new ArgumentException(
                $"{descriptor.FullName} is {Describe(actualKind)} but was registered as {Describe(kind)}; use {nameof(GrpcLiteServiceBuilder)}.{RegistrationFor(actualKind)}.",
                nameof(method));
        }

        CheckType(descriptor, "request", descriptor.InputType, typeof(TRequest));
        CheckType(descriptor, "response", descriptor.OutputType, typeof(TResponse));
        if (_methods.Exists(m => m.Method == descriptor))
        {
            throw new ArgumentException($"{descriptor.FullName} is registered twice.", nameof(method));
        }

        return descriptor;
    }

    private static void CheckType(MethodDescriptor method, string role, MessageDescriptor expected, Type actual)
    {
        if (expected.ClrType != actual)
        {
            throw new ArgumentException(
                $"{method.FullName} has {role} type {expected.FullName} ({expected.ClrType?.FullName ?? "no generated class"}), not {actual.FullName}.");
        }
    }

    private static MethodKind KindOf(MethodDescriptor method) => (method.IsClientStreaming, method.IsServerStreaming) switch
    {
        (false, false) => MethodKind.Unary,
        (false, true) => MethodKind.ServerStreaming,
        (true, false) => MethodKind.ClientStreaming,
        (true, true) => MethodKind.DuplexStreaming,
    };

    private static string Describe(MethodKind kind) => kind switch
    {
        MethodKind.Unary => "unary",
        MethodKind.ServerStreaming => "server-streaming",
        MethodKind.ClientStreaming => "client-streaming",
        _ => "bidirectional-streaming",
    };

    private static string RegistrationFor(MethodKind kind) => kind switch
    {
        MethodKind.Unary => nameof(Unary),
        MethodKind.ServerStreaming => nameof(ServerStreaming),
        MethodKind.DuplexStreaming => nameof(DuplexStreaming),
        _ => "(client streaming is not supported)",
    };

    private enum MethodKind
    {
        Unary,
        ServerStreaming,
        ClientStreaming,
        DuplexStreaming,
    }
}

internal sealed record MethodRegistration(MethodDescriptor Method, Func<ServerCall, Task> Invoke);
