using System.Text.Json;
using System.Text.Json.Serialization;

namespace IpcBench.Reports;

/// <summary>
/// The report as one document: what EXPORT as JSON returns and what the HTML file carries for its charts. Built from
/// the model with every aggregate computed once, so the JSON reader, the tables and the charts see the same figures.
/// </summary>
/// <remarks>Comparison is present only for a report exported against a baseline (and then written out in JSON).</remarks>
public sealed record ReportDocument(SuiteInfo Suite, ReportEnvironment Environment, IReadOnlyList<CellDocument> Cells, IReadOnlyList<PublishedRow> Published,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] SuiteComparison? Comparison = null)
{
    public static readonly JsonSerializerOptions JsonOptions = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.SnakeCaseLower,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.SnakeCaseLower) },
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    public static ReportDocument Build(SuiteReport report, SuiteComparison? comparison = null)
    {
        var strata = CellModality.StrataOf(report);
        var cells = report.Cells.Select(c => new CellDocument(c.Key.Label, c.Key.Shape, c.Key, c.Duration.TotalSeconds, c.Warmup.TotalSeconds,
            SummaryDocument.Of(c.Summary), c.Repetitions, c.Noise, c.NoisyAttempts ?? [], CellModality.Of(c, strata), c.Validity, c.Stop, c.Search)).ToList();
        var suite = new SuiteInfo(report.SuiteId, report.Name, report.State, report.CreatedAt, report.EndedAt, report.Repetitions,
            report.PresetId, report.PresetTitle, report.PresetReproduces, report.Adaptive);
        return new ReportDocument(suite, report.Environment, cells, PublishedRow.All(report), comparison)
        {
            Placement = new PlacementDocument(strata.BoundaryNanoseconds, CellModality.DescribePlacements(report, strata)),
            Load = LoadCurves.Of(report),
        };
    }

    /// <summary>How the repetitions' placement classes (each cell's modality.placements) were drawn from the suite's probes.</summary>
    public PlacementDocument? Placement { get; init; }

    /// <summary>Latency against offered load (rate sweeps and searches); empty when the suite offered no load to plot against.</summary>
    public IReadOnlyList<LoadChart> Load { get; init; } = [];

    public string ToJson(bool indented = true) => JsonSerializer.Serialize(this, new JsonSerializerOptions(JsonOptions) { WriteIndented = indented });
}

/// <param name="Adaptive">The adaptive rule; null with fixed repetitions (and in reports written before it existed).</param>
public sealed record SuiteInfo(string Id, string Name, string State, DateTimeOffset CreatedAt, DateTimeOffset? EndedAt, int Repetitions,
    string? PresetId, string? PresetTitle, string? PresetReproduces, AdaptiveRepetitions? Adaptive = null);

/// <param name="Noise">Noise retries and the marker the tables show (empty text when quiet).</param>
/// <param name="NoisyAttempts">Every attempt max_noise_percent failed, retried ones included (their ids are not among the repetitions).</param>
/// <param name="Modality">Whether the repetitions form several groups, and each repetition's placement class.</param>
/// <param name="Validity">Which succeeded repetitions carry validity issues (each repetition lists its own).</param>
/// <param name="Stop">Adaptive suites: why the cell took no more rounds (its precision is the summary's median_precision_percent).</param>
/// <param name="RateSearch">Rate searches: the sustainable rate, how the search ended and every probe; absent otherwise.</param>
public sealed record CellDocument(string Label, string Shape, CellKey Key, double DurationSeconds, double WarmupSeconds, SummaryDocument Summary,
    IReadOnlyList<RepetitionResult> Repetitions, NoiseMark Noise, IReadOnlyList<NoisyAttempt> NoisyAttempts, CellModality Modality, ValidityMark Validity,
    StopReason Stop = StopReason.None, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] RateSearchReport? RateSearch = null);

/// <summary>The near–far boundary over the suite's probes (null: one class, or no probes) and the rule in words.</summary>
public sealed record PlacementDocument(double? BoundaryNanoseconds, string Description);

/// <summary>A cell's summary with what the model computes on demand written out.</summary>
public sealed record SummaryDocument(CellSummary Figures, double SpreadPercent, bool SpreadExceeded, double DaemonCpuNanosecondsPerMessage,
    double AgentsCpuNanosecondsPerMessage)
{
    public static SummaryDocument Of(CellSummary s) => new(s, s.SpreadPercent, s.SpreadExceeded,
        s.CpuNanosecondsPerMessage(s.DaemonCpuPercent.Median), s.CpuNanosecondsPerMessage(s.AgentsCpuPercent.Median));
}

/// <summary>A row of the published-vs-measured table: the published figure, ours, their ratio, and why they differ.</summary>
public sealed record PublishedRow(int Cell, string CellLabel, string Reference, string Label, FigureMetric Metric, string Unit, string PublishedText,
    double Published, double? Measured, double? Ratio, bool HigherIsBetter, double SpreadPercent, string MethodDifferences, string MeasuredText, bool HasSpread)
{
    public static IReadOnlyList<PublishedRow> All(SuiteReport report)
    {
        var rows = new List<PublishedRow>();
        for (int i = 0; i < report.Cells.Count; i++)
        {
            var cell = report.Cells[i];
            var summary = cell.Summary;
            foreach (var figure in cell.Published)
            {
                double? measured = figure.Measured(summary);
                rows.Add(new PublishedRow(i, cell.Key.Label, figure.Reference, figure.Label, figure.Metric, figure.Unit, figure.PublishedText,
                    figure.Value, measured, measured is { } m && figure.Value != 0 ? m / figure.Value : null, figure.HigherIsBetter,
                    summary.SpreadPercent, figure.MethodDifferences,
                    measured is { } value ? figure.Format(value) + " " + figure.Unit : "not run", summary.Repetitions > 1));
            }
        }

        return rows;
    }
}
