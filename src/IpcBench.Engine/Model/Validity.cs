namespace IpcBench.Daemon.Model;

/// <summary>
/// Why a finished scenario's figures do not measure what its spec asked for (<see cref="ValidityNote"/>): control.proto's
/// names and numbers, so the mapping is a cast (ScenarioProtosTests.EnumPairs) and a kind written by a newer daemon reads
/// back as a number, not an exception.
/// </summary>
public enum ValidityKind
{
    Unspecified = 0,

    /// <summary>A rate-limited scenario delivered less than <see cref="ValidityRules.MinimumDeliveredShare"/> of its offered rate.</summary>
    RateShortfall = 1,

    /// <summary>The backlog (sent but not yet received) grew through the measured window: the receivers did not keep up.</summary>
    ReceiversBehind = 2,

    /// <summary>Sender lag's p99 above <see cref="RunStats.SenderLagDominatesShare"/> of latency p99: the tail is the harness's.</summary>
    SenderLagDominates = 3,

    /// <summary>Other processes used more of the machine than the limit while the scenario measured.</summary>
    NoiseAboveLimit = 4,

    /// <summary>The probes before and after the run fall in different learned placement classes, or the series steps (<see cref="PlacementMoveRule"/>).</summary>
    PlacementMoved = 5,
}

/// <summary>One reason a scenario's result is not a valid measurement, with the figures that show it.</summary>
public sealed record ValidityNote(ValidityKind Kind, string Detail)
{
    /// <summary>The kind as reports and the proto's enum spell it, e.g. "rate_shortfall".</summary>
    public string KindName => System.Text.Json.JsonNamingPolicy.SnakeCaseLower.ConvertName(Kind.ToString());

    /// <summary>One line for tables, e.g. "rate shortfall: delivered 95,012 msg/s, ...".</summary>
    public string Text => $"{KindName.Replace('_', ' ')}: {Detail}";
}
