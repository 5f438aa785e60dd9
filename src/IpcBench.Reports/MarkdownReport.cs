using System.Globalization;
using System.Text;
using static IpcBench.Reports.ReportFormatting;

namespace IpcBench.Reports;

/// <summary>
/// REPORT_FORMAT_MARKDOWN: the environment, a msg/s grid shaped like the published tables per cell shape (median, min–max), every cell's
/// figures, and for presets the published-vs-measured table.
/// </summary>
public static class MarkdownReport
{
    public const string SpreadMark = "⚠";

    /// <summary>Beside a msg/s figure whose repetitions form two or more groups (<see cref="Modality"/>).</summary>
    public const string ModalityMark = "≋";

    public static string Render(SuiteReport report, SuiteComparison? comparison = null)
    {
        var text = new StringBuilder();
        text.AppendLine($"# {Escape(report.Name.Length > 0 ? report.Name : report.SuiteId)}");
        text.AppendLine();
        text.AppendLine($"Suite `{Escape(report.SuiteId)}`, {report.State}, {report.RepetitionsText}" +
            (report.PresetId is null ? "." : $", preset `{Escape(report.PresetId)}`: {Escape(report.PresetReproduces ?? string.Empty)}"));
        text.AppendLine();
        AppendEnvironment(text, report.Environment);
        if (comparison is not null)
        {
            AppendComparison(text, comparison);
        }

        var strata = CellModality.StrataOf(report);
        var modality = report.Cells.ToDictionary<ReportCell, ReportCell, CellModality>(c => c, c => CellModality.Of(c, strata), ReferenceEqualityComparer.Instance);
        foreach (var shape in report.Cells.GroupBy(c => c.Key.Shape))
        {
            AppendGrid(text, shape.Key, shape.ToList(), modality);
        }

        AppendCells(text, report.Cells, modality);
        LoadTables.AppendMarkdown(text, report);
        AppendModality(text, [.. modality.Values], CellModality.DescribePlacements(report, strata));
        AppendPrecision(text, report);
        var published = PublishedRow.All(report);
        if (published.Count > 0)
        {
            AppendPublished(text, published);
        }

        return text.ToString();
    }

    /// <summary>Published vs measured alone: what `run --preset` prints at the end.</summary>
    public static string PublishedTable(SuiteReport report)
    {
        var text = new StringBuilder();
        AppendPublished(text, PublishedRow.All(report));
        return text.ToString();
    }

    private static void AppendEnvironment(StringBuilder text, ReportEnvironment env)
    {
        text.AppendLine($"Machine: {Escape(env.CpuModel)}, {env.LogicalCores} logical cores, kernel {Escape(env.Kernel)}, {Escape(env.Os)}, " +
            $".NET {Escape(env.DotnetVersion)}, IpcBench {Escape(env.BuildVersion)}, host {Escape(env.Hostname)}" +
            (env.CoreToCoreNanoseconds is { } ns ? $", core-to-core round trip {ns:0} ns" : string.Empty) +
            (env.Clock.Length > 0 ? $", clock {Escape(env.Clock)}." : "."));
        if (env.PlacementClasses.Length > 0)
        {
            text.AppendLine();
            text.AppendLine($"Placement classes by core-to-core probe: {Escape(env.PlacementClasses)}.");
        }

        text.AppendLine();
    }

    private static void AppendGrid(StringBuilder text, string shape, IReadOnlyList<ReportCell> cells, IReadOnlyDictionary<ReportCell, CellModality> modality)
    {
        var transports = cells.Select(c => c.Key.Transport).Distinct().ToList();
        var payloads = cells.Select(c => c.Key.PayloadBytes).Distinct().Order().ToList();
        bool roundTrip = cells[0].Key.Mode == CellMode.RoundTrip;
        text.AppendLine($"## {(roundTrip ? "Round trips/s" : "Throughput, msg/s")} — {Escape(shape)} (median, min–max)");
        text.AppendLine();
        text.AppendLine("| Payload | " + string.Join(" | ", transports.Select(Escape)) + " |");
        text.AppendLine("|---|" + string.Concat(transports.Select(_ => "---|")));
        foreach (var payload in payloads)
        {
            var row = transports.Select(t => cells.FirstOrDefault(c => c.Key.Transport == t && c.Key.PayloadBytes == payload) is { } cell
                ? Figure(cell.Summary, modality[cell])
                : "–");
            text.AppendLine($"| {Bytes(payload)} | " + string.Join(" | ", row) + " |");
        }

        text.AppendLine();
    }

    private static string Figure(CellSummary s, CellModality modality)
    {
        if (s.Repetitions == 0)
        {
            return s.Failed > 0 ? "failed" : "not run";
        }

        var m = s.MessagesPerSecond;
        return s.Repetitions == 1
            ? Count(m.Median)
            : $"{Count(m.Median)} ({Count(m.Min)}–{Count(m.Max)}){(s.SpreadExceeded ? " " + SpreadMark : string.Empty)}" +
                (modality.MessagesPerSecond.Kind == ModalityKind.Multimodal ? " " + ModalityMark : string.Empty);
    }

    private static void AppendCells(StringBuilder text, IReadOnlyList<ReportCell> cells, IReadOnlyDictionary<ReportCell, CellModality> modality)
    {
        text.AppendLine("## Every cell (medians over the repetitions)");
        text.AppendLine();
        bool noise = cells.Any(c => c.Noise.Noisy);
        bool invalid = cells.Any(c => c.Validity.Invalid);
        // Only when some cell had enough repetitions to tell: a column of "too few" says nothing the note below does not.
        bool modes = modality.Values.Any(m => m.MessagesPerSecond.Kind != ModalityKind.TooFew);
        text.AppendLine("| Cell | Runs | msg/s |" + string.Concat(CellColumns.Figures.Select(c => $" {c.Header} |")) + " Spread |" +
            (noise ? " Noise |" : string.Empty) + (modes ? " Modes |" : string.Empty) + (invalid ? " Validity |" : string.Empty));
        text.AppendLine("|---|---|---|" + string.Concat(CellColumns.Figures.Select(_ => "---|")) + "---|" + (noise ? "---|" : string.Empty) +
            (modes ? "---|" : string.Empty) + (invalid ? "---|" : string.Empty));
        foreach (var cell in cells)
        {
            var s = cell.Summary;
            string runs = s.Failed == 0 ? $"{s.Repetitions}" : $"{s.Repetitions} ({s.Failed} failed)";
            string spread = s.Repetitions > 1 ? $"{s.SpreadPercent:0.#} %{(s.SpreadExceeded ? " " + SpreadMark : string.Empty)}" : "–";
            string noiseColumn = noise ? $" {(cell.Noise.Noisy ? cell.Noise.Text : "–")} |" : string.Empty;
            string modesColumn = (modes ? $" {Escape(modality[cell].Text)} |" : string.Empty) +
                (invalid ? $" {(cell.Validity.Invalid ? Escape(cell.Validity.Text) : "valid")} |" : string.Empty);
            text.AppendLine($"| {Escape(cell.Key.Label)} | {runs} | {Figure(s, modality[cell])} |" + string.Concat(CellColumns.Figures.Select(c => $" {c.Text(s)} |")) +
                $" {spread} |{noiseColumn}{modesColumn}");
        }

        text.AppendLine();
        text.AppendLine($"{SpreadMark}: msg/s spread (max − min) / median above {RepetitionStats.SpreadThresholdPercent:0} % across repetitions. " +
            "CPU % is of one core over the measured window; latency is one-way, or the round trip in round-trip cells." +
            (noise ? " Noise: rounds whose scenario exceeded max_noise_percent were retried at once (at most twice); the figures are the last attempt's, " +
                "and failed-noisy marks a round still too noisy." : string.Empty));
        text.AppendLine();
        if (invalid)
        {
            text.AppendLine("Invalid repetitions (their figures are kept above; comparisons call these cells inconclusive):");
            text.AppendLine();
            foreach (var cell in cells)
            {
                foreach (var r in cell.Repetitions.Where(r => r.Succeeded && !r.Valid))
                {
                    text.AppendLine(CultureInfo.InvariantCulture, $"- {Escape(cell.Key.Label)}, round {r.Round}: {Escape(string.Join("; ", r.Validity!.Select(v => v.Text)))}");
                }
            }

            text.AppendLine();
        }
    }

    /// <summary>What the modality mark and column mean, and how the placement classes were drawn when a cell has modes.</summary>
    private static void AppendModality(StringBuilder text, IReadOnlyList<CellModality> cells, string placements)
    {
        bool multimodal = cells.Any(c => c.MessagesPerSecond.Kind == ModalityKind.Multimodal);
        text.AppendLine($"{ModalityMark}: the msg/s repetitions form two or more groups (modes), cut where the groups meeting at a gap sit " +
            $"{Modality.MinimumDisparity:0} or more of their spreads apart (Pragmastat's disparity); {Modality.MinimumRepetitions} or more successful " +
            "repetitions are needed to tell" + (cells.All(c => c.MessagesPerSecond.Kind == ModalityKind.TooFew) ? ", and no cell here had them." : ".") +
            (multimodal ? " \"By placement\": each mode ran in a placement class of its own, so the modes are where the vCPUs sat, not the transport; " +
                Escape(placements) + "." : string.Empty));
        text.AppendLine();
    }

    /// <summary>How well each median is known; in an adaptive suite also where each cell stopped and why.</summary>
    private static void AppendPrecision(StringBuilder text, SuiteReport report)
    {
        var rows = PrecisionRow.All(report);
        if (rows.Count == 0)
        {
            return;
        }

        bool adaptive = report.Adaptive is not null;
        text.AppendLine("## Precision of the medians");
        text.AppendLine();
        text.AppendLine("| Cell | Rounds | msg/s median | ± (95 % CI) |" + (adaptive ? " Stopped |" : string.Empty));
        text.AppendLine("|---|---|---|---|" + (adaptive ? "---|" : string.Empty));
        foreach (var r in rows)
        {
            string rounds = r.Failed == 0 ? $"{r.Rounds}" : $"{r.Rounds} ({r.Failed} failed)";
            text.AppendLine($"| {Escape(r.CellLabel)} | {rounds} | {Count(r.Median)} | {r.PrecisionText} |" + (adaptive ? $" {r.StopText} |" : string.Empty));
        }

        text.AppendLine();
        text.AppendLine(PrecisionRow.Note(report));
        text.AppendLine();
    }

    /// <summary>The "Compared with baseline" section alone: what `run --baseline` prints at the end.</summary>
    public static string ComparisonSection(SuiteComparison comparison)
    {
        var text = new StringBuilder();
        AppendComparison(text, comparison);
        return text.ToString();
    }

    private static void AppendComparison(StringBuilder text, SuiteComparison c)
    {
        text.AppendLine($"## Compared with baseline `{Escape(c.BaselineId)}`");
        text.AppendLine();
        text.AppendLine($"**{VerdictName(c.Verdict)}** — {Escape(ComparisonSummary(c))} {ComparisonMethod}, candidate `{Escape(c.CandidateId)}`.");
        text.AppendLine();
        text.AppendLine("| Cell | Verdict | msg/s baseline | msg/s candidate | msg/s change | msg/s shift | p99 µs baseline | p99 µs candidate | p99 change | Beyond the threshold |");
        text.AppendLine("|---|---|---|---|---|---|---|---|---|---|");
        foreach (var cell in c.Cells)
        {
            foreach (var (label, verdict, rate, p99, metrics) in Rows(cell))
            {
                text.AppendLine($"| {Escape(label)} | {VerdictName(verdict)} | {Side(rate, true, Count)} | {Side(rate, false, Count)} | {SideChange(rate)} | " +
                    $"{Escape(Shift(rate))} | {Side(p99, true, Micros)} | {Side(p99, false, Micros)} | {SideChange(p99)} | " +
                    $"{Escape(RowNotes(metrics, cell.Notes))} |");
            }
        }

        text.AppendLine();
        foreach (var note in c.Notes)
        {
            text.AppendLine($"- {Escape(note)}");
        }

        if (c.Notes.Count > 0)
        {
            text.AppendLine();
        }
    }

    private static void AppendPublished(StringBuilder text, IReadOnlyList<PublishedRow> rows)
    {
        text.AppendLine("## Published vs measured");
        text.AppendLine();
        text.AppendLine("| Reference | Published figure | Published | Ours (cell) | Ours | Ratio ours/published | Spread | Method differences |");
        text.AppendLine("|---|---|---|---|---|---|---|---|");
        foreach (var r in rows)
        {
            string measured = r.MeasuredText;
            string spread = !r.HasSpread ? "–" : $"{r.SpreadPercent:0.#} %{(r.SpreadPercent > RepetitionStats.SpreadThresholdPercent ? " " + SpreadMark : string.Empty)}";
            text.AppendLine($"| {Escape(r.Reference)} | {Escape(r.Label)} | {Escape(r.PublishedText)} | {Escape(r.CellLabel)} | {measured} | " +
                $"{(r.Ratio is { } ratio ? Ratio(ratio) : "–")} | {spread} | {Escape(r.MethodDifferences)} |");
        }

        text.AppendLine();
    }

    /// <summary>Text from users (suite names) must not break the table or inject markup into a rendered page.</summary>
    public static string Escape(string value) => value
        .Replace("\\", "\\\\").Replace("|", "\\|").Replace("<", "&lt;").Replace(">", "&gt;")
        .Replace("\r", " ").Replace("\n", " ");
}
