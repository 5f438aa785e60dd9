using System.Diagnostics;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// The scenario's own trace (a root span, linked to the control call that started it, which ends long before), with
/// a child span per phase: start, agents up, warmup, run, stop. Null activities, and free, when nobody listens.
/// </summary>
internal sealed class ScenarioTrace : IDisposable
{
    private readonly Activity? _activity;
    private Activity? _phase;

    public ScenarioTrace(string id, ResolvedSpec spec, ActivityContext? startedBy)
    {
        // RunAsync runs without the StartScenario call's execution context (ScenarioManager), so this is a root span.
        _activity = Telemetry.Source.StartActivity(
            ActivityKind.Internal,
            links: startedBy is { } caller ? [new ActivityLink(caller)] : null,
            name: "scenario");
        _activity?.SetTag("ipcbench.scenario.id", id)
            .SetTag("ipcbench.transport", spec.Transport.Id)
            .SetTag("ipcbench.publishers", spec.Publishers)
            .SetTag("ipcbench.subscribers", spec.Subscribers)
            .SetTag("ipcbench.payload_bytes", spec.PayloadBytes);
    }

    public void BeginPhase(string name)
    {
        _phase?.Dispose();
        _phase = _activity is { } parent ? Telemetry.Source.StartActivity(name, ActivityKind.Internal, parent.Context) : null;
    }

    public void StateChanged(RunState state) => _activity?.AddEvent(new ActivityEvent(state.ToString()));

    /// <summary>Ends the phase and tags the scenario's span with how it ended.</summary>
    public void End(RunState state, string error, RunStats? stats)
    {
        _phase?.Dispose();
        _phase = null;
        if (_activity is not { } activity)
        {
            return;
        }

        activity.SetTag("ipcbench.scenario.state", state.ToString());
        if (stats is not null)
        {
            activity.SetTag("ipcbench.messages_sent", stats.MessagesSent)
                .SetTag("ipcbench.messages_received", stats.MessagesReceived)
                .SetTag("ipcbench.messages_lost", stats.MessagesLost)
                .SetTag("ipcbench.messages_per_second", stats.MessagesPerSecond);
        }

        if (state == RunState.Failed)
        {
            activity.SetStatus(ActivityStatusCode.Error, error);
        }
    }

    public void Dispose()
    {
        _phase?.Dispose();
        _activity?.Dispose();
    }
}
