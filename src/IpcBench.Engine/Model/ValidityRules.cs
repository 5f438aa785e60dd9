using System.Globalization;

namespace IpcBench.Daemon.Model;

/// <summary>
/// When a scenario's figures stop measuring what its spec asked for. Each rule names a way the harness, not the transport,
/// shaped the result: an offered rate not delivered, receivers that fell behind, a tail that is the sender's lateness,
/// a machine others were busy on. A result with a note stays stored and shown; comparisons call its cell INCONCLUSIVE.
/// </summary>
public static class ValidityRules
{
    /// <summary>A rate-limited scenario must deliver at least this share of its offered deliveries per second.</summary>
    public const double MinimumDeliveredShare = 0.99;

    /// <summary>
    /// Others' CPU in percent of the machine above which a result is noisy when its spec sets no max_noise_percent: a
    /// twentieth of the machine is already a tenth of a core on two, enough to move small-message figures.
    /// </summary>
    public const double DefaultNoiseLimitPercent = 5;

    /// <summary>
    /// The backlog must grow by more than this many seconds of deliveries before receivers count as behind: agents report
    /// their counters once a second, so the backlog the daemon sees jumps by up to one second of deliveries as the
    /// report's age changes, and a least-squares line through one such step rises by up to 1.5 seconds' worth.
    /// </summary>
    public const double BacklogGrowthSeconds = 2;

    /// <summary>And by more than this share of the window's deliveries (a long soak's backlog may wander by a few seconds).</summary>
    public const double BacklogGrowthShare = 0.01;

    /// <param name="backlogGrowth">The backlog's growth over the measured window along its fitted line, in deliveries; null
    /// when too few one-second ticks were measured to fit one.</param>
    /// <param name="placement">The probes before and after the run, the machine's learned classes and the measured series (<see cref="PlacementMoveRule"/>).</param>
    public static IReadOnlyList<ValidityNote> Check(ResolvedSpec spec, RunStats stats, double? backlogGrowth, PlacementEvidence? placement = null)
    {
        var notes = new List<ValidityNote>(0);
        double seconds = stats.MeasuredDuration?.TotalSeconds ?? 0;
        if (seconds <= 0)
        {
            return notes;
        }

        double delivered = stats.MessagesPerSecond;
        if (spec.RatePerPublisher > 0)
        {
            double offered = spec.OfferedMessagesPerSecond;
            if (delivered < MinimumDeliveredShare * offered)
            {
                notes.Add(new(ValidityKind.RateShortfall, Invariant(
                    $"delivered {delivered:N0} msg/s, {delivered / offered:P1} of the offered {offered:N0} msg/s (at least {MinimumDeliveredShare:P0} needed)")));
            }
        }

        if (backlogGrowth is { } growth && growth > BacklogGrowthSeconds * delivered && growth > BacklogGrowthShare * stats.MeasuredMessages)
        {
            notes.Add(new(ValidityKind.ReceiversBehind, Invariant(
                $"the backlog (sent, not received: queued, in flight or lost) grew by {growth:N0} messages over the {seconds:0.#} s window, {growth / seconds:N0} msg/s beside {delivered:N0} msg/s delivered")));
        }

        if (stats.SenderLag is { Dominates: true, P99Ns: { } lagP99 } && stats.Latency?.P99Ns is { } latencyP99)
        {
            notes.Add(new(ValidityKind.SenderLagDominates, Invariant(
                $"sender lag p99 {lagP99 / 1000.0:0.#} µs is over {RunStats.SenderLagDominatesShare:P0} of latency p99 {latencyP99 / 1000.0:0.#} µs: the tail is the publisher's lateness")));
        }

        double limit = spec.Placement.MaxNoisePercent ?? DefaultNoiseLimitPercent;
        if (stats.NoisePercent is { } noise && noise > limit)
        {
            string source = spec.Placement.MaxNoisePercent is null ? "the default limit" : "max_noise_percent";
            // Steal is named apart: it is the hypervisor running something else on our vCPUs, not a process of this machine.
            string steal = stats.StealPercent is > 0 and var stolen ? Invariant($" ({stolen:0.0} % of it hypervisor steal)") : string.Empty;
            notes.Add(new(ValidityKind.NoiseAboveLimit, Invariant(
                $"other processes used {noise:0.0} % of the machine while measuring{steal}, above {source} of {limit:0.#} %")));
        }

        if (PlacementMoveRule.Check(placement ?? PlacementEvidence.None) is { } moved)
        {
            notes.Add(moved);
        }

        return notes;
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
