using System.Globalization;
using IpcBench.Daemon.Model;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// Whether a rate-limited probe sustained its offered rate: it completed, delivered at least the search's share of what was
/// offered, kept latency p99 (measured from intended send times, so a late sender shows up as latency) within the bound,
/// and carried neither a sender-lag-dominates nor a receivers-behind note (ValidityRules: both say the offered rate was
/// not what the transport actually carried). Noise is not the transport's: a noisy probe is retried as any suite scenario.
/// </summary>
public static class RateProbeVerdict
{
    /// <returns>Empty when it passed, else why not (the first reason found).</returns>
    public static string Judge(RateSearchSpec search, ResolvedSpec spec, ScenarioSnapshot probe)
    {
        if (probe.State != RunState.Completed || probe.Stats is not { } stats)
        {
            return probe.Error.Length > 0 ? $"the scenario failed: {probe.Error}" : $"the scenario ended {probe.State.ToString().ToUpperInvariant()}";
        }

        double offered = spec.OfferedMessagesPerSecond;
        if (offered > 0 && stats.MessagesPerSecond < search.MinDeliveredRatio * offered)
        {
            return Invariant($"delivered {stats.MessagesPerSecond:N0} msg/s, {stats.MessagesPerSecond / offered:P1} of the offered {offered:N0} (at least {search.MinDeliveredRatio:P1} needed)");
        }

        if (stats.Latency?.P99Ns is not { } p99)
        {
            return "no latency measured";
        }

        if (p99 > search.MaxP99Latency.Ticks * 100)
        {
            return Invariant($"latency p99 {Micros(p99)} above the bound {Micros(search.MaxP99Latency.Ticks * 100)}");
        }

        var note = stats.Validity.FirstOrDefault(v => v.Kind is ValidityKind.SenderLagDominates or ValidityKind.ReceiversBehind);
        return note?.Text ?? string.Empty;
    }

    private static string Micros(long ns) => ns >= 1_000_000 ? Invariant($"{ns / 1e6:0.###} ms") : Invariant($"{ns / 1e3:0.#} µs");

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
