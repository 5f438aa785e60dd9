using System.Runtime.InteropServices;

namespace IpcBench.Daemon.Cli;

/// <summary>
/// Ctrl+C (SIGINT) and SIGTERM while a command runs: a cancellation for its action, and which signal it was, for the
/// exit code. System.CommandLine's own handling is off (ProcessTerminationTimeout = null): after its timeout it returns
/// 130/143 from Main while the action is still shutting down, which could cut a daemon's orderly stop short.
/// </summary>
internal sealed class Interruption : IDisposable
{
    private readonly CancellationTokenSource _cancellation = new();
    private readonly PosixSignalRegistration _interrupt;
    private readonly PosixSignalRegistration _terminate;
    private int _signal;

    public Interruption()
    {
        _interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        _terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);
    }

    public CancellationToken Token => _cancellation.Token;

    /// <summary>The first signal received, if any.</summary>
    public PosixSignal? Signal => Volatile.Read(ref _signal) switch
    {
        0 => null,
        var signal => (PosixSignal)signal,
    };

    public void Dispose()
    {
        _interrupt.Dispose();
        _terminate.Dispose();
        _cancellation.Dispose();
    }

    private void OnSignal(PosixSignalContext context)
    {
        // Not the runtime's default (terminate at once): the action stops in order, and the exit code says why.
        context.Cancel = true;
        Interlocked.CompareExchange(ref _signal, (int)context.Signal, 0);
        _cancellation.Cancel();
    }
}
