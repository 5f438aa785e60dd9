namespace IpcBench.Daemon.Model;

/// <summary>
/// A sustainable-rate search's bounds: a probe passes when it delivers at least <paramref name="MinDeliveredRatio"/> of
/// its offered rate with latency p99 within <paramref name="MaxP99Latency"/>; at most <paramref name="MaxSteps"/>
/// rate-limited probes per cell. <paramref name="LatencySampleEvery"/>: the probes' sampling as requested (0 = the
/// default for a rate-limited run, every message).
/// </summary>
public sealed record RateSearchSpec(TimeSpan MaxP99Latency, double MinDeliveredRatio, int MaxSteps, int LatencySampleEvery = 0)
{
    public const double DefaultMinDeliveredRatio = ValidityRules.MinimumDeliveredShare;
    public const int DefaultMaxSteps = 10;
    public const int MinSteps = 2;
    public const int MaxMaxSteps = 30;
    public static readonly TimeSpan MinLatencyBound = TimeSpan.FromMicroseconds(1);
    public static readonly TimeSpan MaxLatencyBound = TimeSpan.FromSeconds(10);
}

/// <summary>One rate-limited probe: its offered rate per publisher, the scenario that ran it, and why it failed (empty: passed).</summary>
public sealed record RateProbeRecord(double RatePerPublisher, string ScenarioId, bool Passed, string Reason);

/// <summary>
/// How a cell's search stands: the highest passing rate (null when none passed or not yet ended), the lowest failing
/// rate above it, and when <paramref name="Ended"/> why it ended.
/// </summary>
public sealed record RateSearchOutcome(double? SustainableRate, double? BracketHigh, bool Ended, string Result);
