namespace IpcBench.Daemon.Model;

// The engine's own enums. Member names match control.proto's C# names, so logs, metric labels and `run`'s tables read
// as before; Schema/ScenarioProtos is the one place that converts them, and a test holds the two lists equal.

/// <summary>Where a scenario is in its life: PENDING to COMPLETED, STOPPED or FAILED.</summary>
public enum RunState
{
    Unspecified = 0,
    Pending = 1,
    Starting = 2,
    WarmingUp = 3,
    Running = 4,
    Stopping = 5,
    Completed = 6,
    Stopped = 7,
    Failed = 8,
}

/// <summary>Which publishers each subscriber receives from.</summary>
public enum RunTopology
{
    Unspecified = 0,
    AllToAll = 1,
    Paired = 2,
}

/// <summary>Whether payload bytes are written and verified, or only the message header.</summary>
public enum RunPayloadAccess
{
    Unspecified = 0,
    Full = 1,
    HeaderOnly = 2,
}

/// <summary>One-way streaming or echoed round trips.</summary>
public enum RunMode
{
    Unspecified = 0,
    Stream = 1,
    RoundTrip = 2,
}

/// <summary>What a latency figure measures.</summary>
public enum RunLatencyKind
{
    Unspecified = 0,
    OneWay = 1,
    RoundTrip = 2,
}

public static class RunStates
{
    public static bool IsFinished(this RunState state) => state is RunState.Completed or RunState.Stopped or RunState.Failed;
}
