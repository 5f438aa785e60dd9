using Grpc.Core;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Schema;
using IpcBench.Daemon.Persistence;
using IpcBench.Daemon.Scenarios;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload;

namespace IpcBench.Daemon.Control;

/// <summary>
/// The ipcbench.v1.BenchControl RPCs users call with grpcurl. Refusals are the engine's RequestRefusedException, turned
/// into statuses by RefusalInterceptor; nothing here picks a status code.
/// </summary>
public sealed class BenchControlService(
    SpecValidator validator, ScenarioManager scenarios, ScenarioCatalog catalog, TransportRegistry transports, Agents.AgentLauncher launcher,
    SuiteControl suites)
    : BenchControl.BenchControlBase
{
    private static readonly TimeSpan WatchInterval = TimeSpan.FromSeconds(1);

    public override Task<ListTransportsResponse> ListTransports(ListTransportsRequest request, ServerCallContext context)
    {
        var response = new ListTransportsResponse();
        foreach (var transport in transports.All)
        {
            var capabilities = transport.Capabilities;
            var unavailable = transport.UnavailableReason
                ?? (capabilities.CrossProcess ? launcher.UnavailableReason : null);
            var info = new TransportInfo
            {
                Id = transport.Id,
                Description = transport.Description,
                CrossProcess = capabilities.CrossProcess,
                ZeroCopy = capabilities.ZeroCopy,
                Available = unavailable is null,
                UnavailableReason = unavailable ?? string.Empty,
                SupportsRoundTrip = capabilities.SupportsRoundTrip,
                DefaultWaitStrategy = WaitStrategies.ToProto(capabilities.DefaultWaitMode),
                MaxPayloadBytes = capabilities.MaxPayloadBytes,
                HeaderBytes = MessageHeader.Size,
            };
            info.WaitStrategies.AddRange(capabilities.WaitModes.Select(WaitStrategies.ToProto));
            response.Transports.Add(info);
        }

        return Task.FromResult(response);
    }

    public override Task<StartScenarioResponse> StartScenario(StartScenarioRequest request, ServerCallContext context)
    {
        var run = request.ResumeFrom.Length > 0 ? Resume(request) : scenarios.Start(validator.Resolve(request.Spec));
        return Task.FromResult(new StartScenarioResponse { Id = run.Id, Scenario = ScenarioProtos.ToProto(run.Snapshot()) });
    }

    /// <summary>A new scenario with a finished one's spec, through the same validation as any StartScenario, linked to it.</summary>
    private ScenarioRun Resume(StartScenarioRequest request)
    {
        if (request.Spec is not null)
        {
            throw new RequestRefusedException(RefusalKind.InvalidArgument, "spec", "give a spec or resume_from, not both: a resumed scenario runs the spec of the one it resumes");
        }

        var old = catalog.Get(request.ResumeFrom, "resume_from");
        if (!old.IsFinished || old.Spec is null)
        {
            throw new RequestRefusedException(RefusalKind.FailedPrecondition, "resume_from",
                $"scenario {old.Id} is {ScenarioProtos.ToProto(old.State)}; only a finished one can be resumed (stop it first)");
        }

        return scenarios.Start(validator.Resolve(ScenarioProtos.ToProto(old.Spec)), resumedFrom: old.Id);
    }

    public override Task<Scenario> GetScenario(GetScenarioRequest request, ServerCallContext context) =>
        Task.FromResult(ScenarioProtos.ToProto(catalog.Get(request.Id)));

    public override Task<ListScenariosResponse> ListScenarios(ListScenariosRequest request, ServerCallContext context)
    {
        var query = ScenarioQuery.From(transports, request);
        var (page, more) = catalog.List(query.Filter, query.After, query.PageSize);
        var response = new ListScenariosResponse();
        response.Scenarios.AddRange(page.Select(ScenarioProtos.ToProto));
        if (more)
        {
            response.NextPageToken = query.NextToken(page[^1]);
        }

        return Task.FromResult(response);
    }

    public override async Task<Scenario> StopScenario(StopScenarioRequest request, ServerCallContext context)
    {
        var (run, stored) = catalog.Find(request.Id);
        if (run is null)
        {
            // Only in the database: it finished (or was failed at start-up), so stopping it is harmless.
            return ScenarioProtos.ToProto(stored);
        }

        run.RequestStop();
        // Answer with the result, not a half-stopped snapshot: stopping takes a drain, which is short.
        await Task.WhenAny(run.Completion, Task.Delay(TimeSpan.FromSeconds(30), context.CancellationToken)).ConfigureAwait(false);
        return ScenarioProtos.ToProto(run.Snapshot());
    }

    public override async Task WatchScenario(WatchScenarioRequest request, IServerStreamWriter<Scenario> responseStream, ServerCallContext context)
    {
        var (run, stored) = catalog.Find(request.Id);
        var cancellationToken = context.CancellationToken;
        if (run is null)
        {
            // A stored scenario has finished: its final snapshot, and the stream ends, as for a live one.
            await responseStream.WriteAsync(ScenarioProtos.ToProto(stored), cancellationToken).ConfigureAwait(false);
            return;
        }

        while (true)
        {
            // Decide on the snapshot sent, not on Completion: a scenario shows its final state a moment before its
            // Completion (its trace and log are written in between), and a tick there must not send it twice.
            var snapshot = run.Snapshot();
            await responseStream.WriteAsync(ScenarioProtos.ToProto(snapshot), cancellationToken).ConfigureAwait(false);
            if (snapshot.IsFinished)
            {
                return;
            }

            await Task.WhenAny(run.Completion, Task.Delay(WatchInterval, cancellationToken)).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    public override Task<ExportScenariosResponse> ExportScenarios(ExportScenariosRequest request, ServerCallContext context)
    {
        var format = request.Format switch
        {
            ExportFormat.Unspecified or ExportFormat.Json => ExportFormat.Json,
            ExportFormat.Csv => ExportFormat.Csv,
            ExportFormat.HdrLog => ExportFormat.HdrLog,
            ExportFormat.SoakHtml => ExportFormat.SoakHtml,
            _ => throw new RequestRefusedException(RefusalKind.InvalidArgument, "format",
                $"unknown value {(int)request.Format}; allowed: EXPORT_FORMAT_JSON, EXPORT_FORMAT_CSV, EXPORT_FORMAT_HDR_LOG, EXPORT_FORMAT_SOAK_HTML"),
        };

        var response = new ExportScenariosResponse { Format = format };
        List<ScenarioResult> records;
        if (request.Ids.Count > 0)
        {
            if (request.Ids.Count > ScenarioQuery.MaxPageSize)
            {
                throw new RequestRefusedException(RefusalKind.InvalidArgument, "ids", $"at most {ScenarioQuery.MaxPageSize} per export; got {request.Ids.Count}");
            }

            records = [.. request.Ids.Select((id, i) => catalog.Record(catalog.Get(id, $"ids[{i}]")))];
        }
        else
        {
            var query = ScenarioQuery.From(transports, request);
            var (page, more) = catalog.List(query.Filter, query.After, query.PageSize);
            records = [.. page.Select(catalog.Record)];
            if (more)
            {
                response.NextPageToken = query.NextToken(page[^1]);
            }
        }

        response.ScenarioCount = records.Count;
        if (format == ExportFormat.Json)
        {
            response.ContentType = ScenarioExporter.JsonContentType;
            response.Content = ScenarioExporter.Json(records, DateTime.UtcNow);
        }
        else if (format == ExportFormat.SoakHtml)
        {
            response.ContentType = ScenarioExporter.HtmlContentType;
            response.Content = SoakPages.Render(records, catalog.SoakPoints);
        }
        else if (format == ExportFormat.HdrLog)
        {
            response.ContentType = ScenarioExporter.HdrLogContentType;
            response.Content = ScenarioExporter.HdrLog([.. records.Select(r => (r.Scenario.Id, catalog.LatencyIntervals(r.Scenario.Id)))]);
        }
        else
        {
            response.ContentType = ScenarioExporter.CsvContentType;
            response.Content = ScenarioExporter.SummaryCsv(records);
            response.SeriesContent = ScenarioExporter.SeriesCsv(records);
        }

        return Task.FromResult(response);
    }

    public override Task<CompareScenariosResponse> CompareScenarios(CompareScenariosRequest request, ServerCallContext context)
    {
        double threshold = ScenarioComparer.ResolveThreshold(request.ThresholdPercent);
        var baseline = ScenarioProtos.ToProto(catalog.Get(request.BaselineId, "baseline_id"));
        var candidate = ScenarioProtos.ToProto(catalog.Get(request.CandidateId, "candidate_id"));
        ScenarioComparer.RequireComparable("baseline_id", baseline);
        ScenarioComparer.RequireComparable("candidate_id", candidate);
        return Task.FromResult(ScenarioComparer.Compare(baseline, candidate, threshold));
    }

    // Suites: the work is SuiteControl's; these only route the calls.
    public override Task<StartSuiteResponse> StartSuite(StartSuiteRequest request, ServerCallContext context) => Task.FromResult(suites.Start(request));

    public override Task<Suite> GetSuite(GetSuiteRequest request, ServerCallContext context) => Task.FromResult(suites.Get(request.Id));

    public override Task<ListSuitesResponse> ListSuites(ListSuitesRequest request, ServerCallContext context) => Task.FromResult(suites.List(request));

    public override Task<Suite> StopSuite(StopSuiteRequest request, ServerCallContext context) => suites.StopAsync(request, context.CancellationToken);

    public override Task WatchSuite(WatchSuiteRequest request, IServerStreamWriter<SuiteProgress> responseStream, ServerCallContext context) =>
        suites.WatchAsync(request, responseStream, context.CancellationToken);

    public override Task<ExportSuiteResponse> ExportSuite(ExportSuiteRequest request, ServerCallContext context) => Task.FromResult(suites.Export(request));

    public override Task<ListSuitePresetsResponse> ListSuitePresets(ListSuitePresetsRequest request, ServerCallContext context) =>
        Task.FromResult(suites.Presets());

    public override Task<CompareSuitesResponse> CompareSuites(CompareSuitesRequest request, ServerCallContext context) => Task.FromResult(suites.Compare(request));
}
