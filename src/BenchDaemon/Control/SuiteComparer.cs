using IpcBench.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>
/// CompareSuites in proto: Reports' <see cref="SuiteComparison"/> (cells matched by key, compared on their medians with
/// the metric rule CompareScenarios uses) mapped to CompareSuitesResponse. ExportSuite's baseline section renders the
/// same comparison, so the RPC and the report cannot disagree.
/// </summary>
public static class SuiteComparer
{
    public static CompareSuitesResponse Compare(SuiteReport baseline, SuiteReport candidate, double thresholdPercent) =>
        ToProto(SuiteComparison.Compare(baseline, candidate, thresholdPercent));

    public static CompareSuitesResponse ToProto(SuiteComparison comparison)
    {
        var response = new CompareSuitesResponse
        {
            BaselineId = comparison.BaselineId,
            CandidateId = comparison.CandidateId,
            ThresholdPercent = comparison.ThresholdPercent,
            Verdict = (ComparisonVerdict)comparison.Verdict,
        };
        response.Notes.AddRange(comparison.Notes);
        foreach (var cell in comparison.Cells)
        {
            var proto = new SuiteCellComparison
            {
                Spec = SuiteCells.ToSpec(cell.Key, cell.Duration, cell.Warmup, string.Empty),
                Verdict = (ComparisonVerdict)cell.Verdict,
            };
            proto.Metrics.AddRange(cell.Metrics.Select(ScenarioComparer.ToProto));
            proto.Notes.AddRange(cell.Notes);
            proto.FlagCosts.AddRange(cell.FlagCosts.Select(c => new V1.FlagCost
            {
                Kind = Enum.TryParse<ValidityKind>(c.Kind.Replace("_", string.Empty, StringComparison.Ordinal), ignoreCase: true, out var kind) ? kind : ValidityKind.Unspecified,
                BaselineRepetitions = c.Baseline,
                CandidateRepetitions = c.Candidate,
            }));
            response.Cells.Add(proto);
        }

        return response;
    }
}
