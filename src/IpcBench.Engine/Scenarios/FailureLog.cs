using IpcBench.Daemon.Core;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The failures of one scenario, from any thread, and which of them users read. Priorities: 3 a cause (an agent died,
/// failed or stopped reporting), 2 a symptom of an agent (its connection broke), 1 a publisher or the engine, 0 the
/// unexpected.
/// </summary>
internal sealed class FailureLog
{
    private readonly List<(int Priority, string Message)> _failures = [];
    private readonly TaskCompletionSource<string> _first = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes with the first failure's message.</summary>
    public Task<string> First => _first.Task;

    public void Fail(int priority, string message)
    {
        lock (_failures)
        {
            _failures.Add((priority, message));
        }

        _first.TrySetResult(message);
    }

    /// <summary>Throws the first failure as the scenario's, if there is one.</summary>
    public void ThrowIfFailed()
    {
        if (_first.Task.IsCompleted)
        {
            throw new ScenarioFailureException(_first.Task.Result);
        }
    }

    /// <summary>
    /// Records <paramref name="exception"/> and chooses the error to report. A dead agent also breaks its publishers'
    /// links; the agent's death is the cause users need to read, so this waits a moment for it before choosing.
    /// </summary>
    public async Task<string> ChooseAsync(Exception exception)
    {
        Fail(exception is ScenarioFailureException ? 1 : 0, exception is ScenarioFailureException
            ? exception.Message
            : $"{exception.GetType().Name}: {exception.Message}");
        await Task.Delay(300).ConfigureAwait(false);
        lock (_failures)
        {
            // The earliest among the most telling failures.
            return _failures.OrderByDescending(f => f.Priority).First().Message;
        }
    }
}
