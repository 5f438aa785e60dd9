using System.Diagnostics;
using System.Threading.Channels;
using IpcBench.V1;

namespace IpcBench.Daemon.Agents;

/// <summary>
/// One agent process and its Attach stream, for as long as the process lives: the scenario it serves now (its
/// <see cref="AgentSession"/>) or, between scenarios, none (it waits in the <see cref="AgentPool"/>). The commands of
/// every scenario it serves go down the one stream; closing the stream is what makes the agent exit.
/// </summary>
public sealed class AgentConnection
{
    private readonly Channel<AgentCommand> _commands = Channel.CreateUnbounded<AgentCommand>();
    private readonly TaskCompletionSource<int> _exited = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private AgentSession? _session;
    private int _attached;

    public AgentConnection(AgentSession first)
    {
        _session = first;
        first.Connection = this;
    }

    public Process? Process { get; set; }

    public int Pid { get; set; }

    /// <summary>Scenarios this process finished before the one it serves now.</summary>
    public int ScenariosServed { get; private set; }

    /// <summary>The scenario's session it serves; null while idle.</summary>
    public AgentSession? Session => Volatile.Read(ref _session);

    /// <summary>Completes with the exit code once the process has exited (and been reaped).</summary>
    public Task<int> Exited => _exited.Task;

    /// <summary>What it may hold idle, from the scenarios it served (the pool's check between scenarios).</summary>
    internal IdleBaseline Baseline { get; } = new();

    internal long IdleSinceNs { get; set; }

    /// <summary>The scenario is over for this process; it waits for another, serving nobody meanwhile.</summary>
    internal void Release()
    {
        ScenariosServed++;
        Volatile.Write(ref _session, null);
    }

    /// <summary>Hands the idle agent the scenario of <paramref name="session"/>: it reports as that session from now on.</summary>
    internal void Assign(AgentSession session)
    {
        Volatile.Write(ref _session, session);
        session.Connection = this;
        session.Pid = Pid;
        session.ScenariosBefore = ScenariosServed;
        Send(new AgentCommand { Assignment = session.AssignmentFor(reassigned: true) });
    }

    public void Send(AgentCommand command) => _commands.Writer.TryWrite(command);

    /// <summary>Ends the agent's stream: it exits once it has read what was sent before.</summary>
    public void Close() => _commands.Writer.TryComplete();

    /// <summary>Serves the agent's Attach stream until it is closed or the agent goes away.</summary>
    public async Task AttachAsync(Func<AgentCommand, Task> write, CancellationToken agentGone)
    {
        if (Interlocked.Exchange(ref _attached, 1) == 1)
        {
            throw new InvalidOperationException($"agent pid {Pid} attached twice.");
        }

        try
        {
            if (Session is { } first)
            {
                await write(new AgentCommand { Assignment = first.AssignmentFor(reassigned: false) }).ConfigureAwait(false);
            }

            await foreach (var command in _commands.Reader.ReadAllAsync(agentGone).ConfigureAwait(false))
            {
                await write(command).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
            Session?.OnDisconnected();
            throw;
        }
    }

    internal void OnExited(int exitCode)
    {
        _exited.TrySetResult(exitCode);
        Session?.OnExited(exitCode);
    }

    /// <summary>Closes the stream and waits up to <paramref name="grace"/> for the process to exit, then kills it.</summary>
    internal async Task StopAsync(TimeSpan grace, Action<string> warn)
    {
        Close();
        if (Process is not { } process)
        {
            return;
        }

        try
        {
            using var timeout = new CancellationTokenSource(grace);
            await process.WaitForExitAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            warn($"agent pid {Pid} did not exit; killing it");
            try
            {
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            }
            catch (InvalidOperationException)
            {
                // Exited between the check and the kill.
            }
        }
        finally
        {
            process.Dispose();
        }
    }
}
