using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Reports;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Scenarios;
using IpcBench.V1;

namespace IpcBench.Daemon.Control;

/// <summary>The suite RPCs of BenchControl (BenchControlService hands them here): start, read, stop, watch, export, presets.</summary>
public sealed class SuiteControl(SuitePlanner planner, SuiteManager suites, SuiteReports reports, ScenarioCatalog catalog, PresetCatalog presets)
{
    private static readonly TimeSpan WatchInterval = TimeSpan.FromSeconds(1);

    public StartSuiteResponse Start(StartSuiteRequest request)
    {
        var suite = suites.Start(planner.Plan(request.Spec));
        return new StartSuiteResponse { Id = suite.Id, Suite = ToProto(suite.Snapshot()) };
    }

    public Suite Get(string id) => ToProto(suites.Find(id, "id").Suite);

    public ListSuitesResponse List(ListSuitesRequest request) => SuiteListQuery.Page(suites.List(), request, ToProto);

    public async Task<Suite> StopAsync(StopSuiteRequest request, CancellationToken cancellationToken)
    {
        var (suite, stored) = suites.Find(request.Id, "id");
        if (suite is null)
        {
            // Only in the database: it has finished, so stopping it is harmless.
            return ToProto(stored);
        }

        suite.RequestStop();
        // Answer with the suite as it ended: stopping its running scenario takes a drain, which is short.
        await Task.WhenAny(suite.Completion, Task.Delay(TimeSpan.FromSeconds(30), cancellationToken)).ConfigureAwait(false);
        return ToProto(suite.Snapshot());
    }

    public async Task WatchAsync(WatchSuiteRequest request, IServerStreamWriter<SuiteProgress> stream, CancellationToken cancellationToken)
    {
        var (suite, stored) = suites.Find(request.Id, "id");
        if (suite is null)
        {
            await stream.WriteAsync(Progress(null, stored), cancellationToken).ConfigureAwait(false);
            return;
        }

        while (true)
        {
            var changed = suite.Changed;
            var snapshot = suite.Snapshot();
            await stream.WriteAsync(Progress(suite, snapshot), cancellationToken).ConfigureAwait(false);
            if (snapshot.IsFinished)
            {
                return;
            }

            await Task.WhenAny(changed, Task.Delay(WatchInterval, cancellationToken)).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    public ExportSuiteResponse Export(ExportSuiteRequest request)
    {
        var report = reports.Build(suites.Find(request.Id, "id").Suite);
        var comparison = BaselineComparison(request, report);
        var format = FormatOf(request.Format);
        var response = new ExportSuiteResponse
        {
            Format = System.Enum.Parse<ReportFormat>(format.Id, ignoreCase: true),
            ContentType = format.ContentType,
            FileName = format.FileName,
            Content = format.Render(report, comparison),
        };
        if (comparison is not null && format.RenderComparison(comparison) is { } separate)
        {
            response.ComparisonContent = separate;
        }

        return response;
    }

    /// <summary>The registered format a proto value names (REPORT_FORMAT_MARKDOWN: "markdown"); unspecified is the default.</summary>
    private static ISuiteReportFormat FormatOf(ReportFormat value) =>
        value == ReportFormat.Unspecified ? SuiteReportFormats.Default
        : (System.Enum.IsDefined(value) ? SuiteReportFormats.Find(value.ToString().ToLowerInvariant()) : null)
            ?? throw new RequestRefusedException(RefusalKind.InvalidArgument, "format",
                $"unknown value {(int)value}; allowed: {string.Join(", ", SuiteReportFormats.All.Select(f => "REPORT_FORMAT_" + f.Id.ToUpperInvariant()))}");

    /// <summary>ExportSuite's baseline section: the comparison CompareSuites would answer, or none without baseline_id.</summary>
    private SuiteComparison? BaselineComparison(ExportSuiteRequest request, SuiteReport candidate)
    {
        if (request.BaselineId.Length == 0)
        {
            if (request.ThresholdPercent != 0)
            {
                throw new RequestRefusedException(RefusalKind.InvalidArgument, "threshold_percent", "applies to the baseline comparison only; set baseline_id too");
            }

            return null;
        }

        double threshold = ScenarioComparer.ResolveThreshold(request.ThresholdPercent);
        var baseline = reports.Build(suites.Find(request.BaselineId, "baseline_id").Suite);
        return SuiteComparison.Compare(baseline, candidate, threshold);
    }

    public ListSuitePresetsResponse Presets()
    {
        var response = new ListSuitePresetsResponse();
        response.Presets.AddRange(presets.Suites.Select(SuiteCells.ToProto));
        return response;
    }

    public CompareSuitesResponse Compare(CompareSuitesRequest request)
    {
        double threshold = ScenarioComparer.ResolveThreshold(request.ThresholdPercent);
        var baseline = reports.Build(suites.Find(request.BaselineId, "baseline_id").Suite);
        var candidate = reports.Build(suites.Find(request.CandidateId, "candidate_id").Suite);
        return SuiteComparer.Compare(baseline, candidate, threshold);
    }

    private Suite ToProto(SuiteSnapshot snapshot)
    {
        var report = reports.Build(snapshot);
        var environment = snapshot.Cells.SelectMany(c => c.ScenarioIds).Take(1).Select(id => catalog.Get(id).Environment).FirstOrDefault();
        return SuiteProtos.ToProto(snapshot, report, environment, presets.Find(snapshot.Preset));
    }

    private static SuiteProgress Progress(SuiteRun? suite, SuiteSnapshot snapshot)
    {
        var progress = new SuiteProgress
        {
            SuiteId = snapshot.Id,
            State = SuiteProtos.ToProto(snapshot.State),
            ScenariosDone = snapshot.ScenariosDone,
            ScenariosTotal = snapshot.ScenariosTotal,
            Round = snapshot.RunningRound ?? 0,
            RunningCell = snapshot.RunningCell is { } cell ? cell + 1 : 0,
            RunningScenarioId = snapshot.RunningScenarioId ?? string.Empty,
            At = Timestamp.FromDateTime(DateTime.UtcNow),
        };
        if (suite?.Running is { } run)
        {
            var scenario = run.Snapshot();
            progress.RunningSpec = scenario.Spec is { } spec ? ScenarioProtos.ToProto(spec) : null;
            progress.RunningState = ScenarioProtos.ToProto(scenario.State);
            progress.RunningMessagesPerSecond = scenario.LastInterval?.MessagesPerSecond ?? 0;
        }

        if (!snapshot.IsFinished)
        {
            progress.Eta = Duration.FromTimeSpan(Eta(snapshot, suite?.Running?.Snapshot()));
        }

        return progress;
    }

    /// <summary>Nominal (duration + warmup per scenario) until one has finished, then at the pace so far.</summary>
    private static TimeSpan Eta(SuiteSnapshot suite, ScenarioSnapshot? running)
    {
        int left = suite.ScenariosTotal - suite.ScenariosDone;
        if (suite.ScenariosDone > 0 && suite.StartedAt is { } started)
        {
            var perScenario = (DateTime.UtcNow - started) / suite.ScenariosDone;
            return perScenario * left;
        }

        var first = suite.Cells.Count > 0 ? suite.Cells[0].Spec : null;
        var nominal = (first?.Duration ?? TimeSpan.Zero) + (first?.Warmup ?? TimeSpan.Zero);
        var elapsed = running?.StartedAt is { } at ? DateTime.UtcNow - at : TimeSpan.Zero;
        var eta = nominal * left - elapsed;
        return eta < TimeSpan.Zero ? TimeSpan.Zero : eta;
    }
}
