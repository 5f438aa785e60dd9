using System.Net.Sockets;
using System.Text;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// sd_notify(3) for Type=notify units (Microsoft.Extensions.Hosting.Systemd is not on the NuGet mirror): READY=1 once
/// the host has started (Kestrel listening, so the control and metrics ports accept connections) and STOPPING=1 when
/// shutdown begins, each one datagram to $NOTIFY_SOCKET — a socket path, or an abstract socket when it starts with '@'.
/// Without NOTIFY_SOCKET (not run by systemd) it does nothing. The variable is removed from the environment, as
/// sd_notify's unset_environment does, so the agent processes do not inherit it.
/// </summary>
public sealed class SystemdNotifier(IHostApplicationLifetime lifetime, ILogger<SystemdNotifier> logger) : IHostedService
{
    public const string SocketVariable = "NOTIFY_SOCKET";

    private readonly string? _socket = TakeSocketVariable();

    public Task StartAsync(CancellationToken cancellationToken)
    {
        if (_socket is not null)
        {
            lifetime.ApplicationStarted.Register(() => Notify($"READY=1\nSTATUS=serving\nMAINPID={Environment.ProcessId}"));
            lifetime.ApplicationStopping.Register(() => Notify("STOPPING=1\nSTATUS=stopping scenarios"));
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Sends one notification; failures are logged, never thrown (the daemon works without systemd).</summary>
    public bool Notify(string state)
    {
        if (_socket is null)
        {
            return false;
        }

        try
        {
            using var socket = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
            socket.SendTo(Encoding.UTF8.GetBytes(state), EndPoint(_socket));
            return true;
        }
        catch (Exception e) when (e is SocketException or ArgumentException or IOException)
        {
            logger.LogWarning("Could not notify systemd at {NotifySocket}: {Reason}", _socket, e.Message);
            return false;
        }
    }

    /// <summary>"@name" is the abstract socket "\0name"; anything else a path.</summary>
    public static UnixDomainSocketEndPoint EndPoint(string socket) =>
        new(socket.StartsWith('@') ? "\0" + socket[1..] : socket);

    private static string? TakeSocketVariable()
    {
        var socket = Environment.GetEnvironmentVariable(SocketVariable);
        if (string.IsNullOrEmpty(socket))
        {
            return null;
        }

        Environment.SetEnvironmentVariable(SocketVariable, null);
        return socket;
    }
}
