using System.Globalization;

namespace IpcBench.Daemon.Model;

/// <summary>
/// What tells whether the host moved a scenario's vCPUs while it measured: the core-to-core probe before the run and
/// after it (ns, on the CPUs the first publisher and subscriber were pinned to, or 0 and 1), the placement classes
/// learned from the machine's probe history, and the measured window's msg/s second by second (or, past an hour, each
/// rate the mean of <see cref="SecondsPerRate"/> seconds).
/// </summary>
public sealed record PlacementEvidence(long? BeforeNs, long? AfterNs, PlacementClasses Classes, IReadOnlyList<double> MeasuredRates)
{
    public int SecondsPerRate { get; init; } = 1;

    public static readonly PlacementEvidence None = new(null, null, PlacementClasses.NotLearned, []);
}

/// <summary>
/// `placement moved`, only on evidence of a move: the probes before and after fall in different learned classes, or
/// the series shows a step (<see cref="SeriesStep"/>). Two probes of one class are one placement whatever their ratio
/// (one probe has its own spread); a series without a step measured one placement whatever the probes say. The detail
/// names which evidence it rests on ("probes:", "series step:", or both).
/// </summary>
public static class PlacementMoveRule
{
    /// <summary>Before the classes are learned (a fresh database), probes this many times apart count as two placements.</summary>
    public const double UnlearnedRatio = IpcBench.Workload.CoreToCoreProbe.PlacementGapRatio;

    public static ValidityNote? Check(PlacementEvidence evidence)
    {
        var reasons = new List<string>(2);
        if (evidence is { BeforeNs: > 0 and var before, AfterNs: > 0 and var after })
        {
            var classes = evidence.Classes;
            if (classes.Learned)
            {
                if (classes.IndexOf(before) != classes.IndexOf(after))
                {
                    reasons.Add(Invariant($"probes: {before} ns before the run ({classes.NameOf(before)}) and {after} ns after it ({classes.NameOf(after)}; {classes.Describe()})"));
                }
            }
            else if (Math.Max(before, after) >= UnlearnedRatio * Math.Min(before, after))
            {
                reasons.Add(Invariant($"probes: {before} ns before the run and {after} ns after it, {UnlearnedRatio:0}x or more apart ({classes.Describe()})"));
            }
        }

        if (SeriesStep.Find(evidence.MeasuredRates, evidence.SecondsPerRate) is { } step)
        {
            string probes = evidence is { BeforeNs: > 0, AfterNs: > 0 } ? Invariant($"; probes {evidence.BeforeNs} → {evidence.AfterNs} ns") : string.Empty;
            reasons.Add(Invariant(
                $"series step: msg/s went from {step.BeforeMedian:N0} to {step.AfterMedian:N0} at second {step.AtSecond} of the measured window (every second of one side {SeriesStep.MinimumRatio:0.#}x or more beyond every second of the other){probes}"));
        }

        return reasons.Count == 0 ? null
            : new ValidityNote(ValidityKind.PlacementMoved, string.Join("; and ", reasons) + ": the threads' placement changed during the run, so the figures may mix two placements");
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
