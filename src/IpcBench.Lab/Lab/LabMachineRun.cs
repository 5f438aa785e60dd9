using Grpc.Core;
using Grpc.Net.Client;
using IpcBench.Reports;
using IpcBench.V1;

namespace IpcBench.Daemon.Lab;

/// <summary>
/// One daemon of `run --daemons`: StartSuite, WatchSuite until the suite has finished (a broken stream is picked up
/// again while the daemon still answers), then GetSuite and ExportSuite as JSON for its report. Whatever goes wrong
/// ends here as <see cref="Error"/>, in words the report can print; the other daemons are not disturbed.
/// </summary>
internal sealed class LabMachineRun(LabDaemon daemon, GrpcChannel channel) : IDisposable
{
    /// <summary>WatchSuite sends at least once a second; this long without a message, the machine is taken as gone.</summary>
    public static readonly TimeSpan Silence = TimeSpan.FromSeconds(30);

    private static readonly TimeSpan CallDeadline = TimeSpan.FromSeconds(30);
    private const int MaxReconnects = 3;

    private readonly BenchControl.BenchControlClient _client = new(channel);
    private readonly Lock _gate = new();
    private string? _suiteId;
    private bool _stopRequested;
    private Task _stopping = Task.CompletedTask;

    public LabDaemon Daemon => daemon;

    /// <summary>The daemon's last word on the suite; null until it was started.</summary>
    public SuiteProgress? Progress { get; private set; }

    public string? Error { get; private set; }

    public SuiteReport? Report { get; private set; }

    /// <summary>ExportSuite's JSON as the daemon wrote it: the machine's own report.json.</summary>
    public string? ReportJson { get; private set; }

    public MachineResult Result => new(daemon.Name, daemon.Address, Report, Error, Placement);

    private MachinePlacement? Placement { get; set; }

    public async Task RunAsync(SuiteSpec spec, ILabProgress progress, CancellationToken interrupted)
    {
        if (interrupted.IsCancellationRequested)
        {
            Error = "not started: interrupted before its turn";
            progress.Update(this);
            return;
        }

        try
        {
            // Not cancelled by Ctrl+C: a start cut off mid-call could leave a suite running that nobody stops.
            var started = await _client.StartSuiteAsync(new StartSuiteRequest { Spec = spec }, deadline: Deadline(CallDeadline)).ConfigureAwait(false);
            lock (_gate)
            {
                _suiteId = started.Id;
                if (_stopRequested)
                {
                    _stopping = StopAsync(started.Id);
                }
            }

            progress.Update(this);
            await WatchAsync(started.Id, progress).ConfigureAwait(false);
            await ReadReportAsync(started.Id).ConfigureAwait(false);
        }
        catch (RpcException e) when (_suiteId is null)
        {
            Error = $"StartSuite: {Describe(e)}";
        }
        catch (RpcException e)
        {
            Error = $"reading its report: {Describe(e)}";
        }
        catch (MachineLostException e)
        {
            Error = e.Message;
        }
        catch (Exception e) when (e is InvalidDataException or System.Text.Json.JsonException)
        {
            // A daemon of another version whose ExportSuite JSON this build cannot read: that machine fails, not the run.
            Error = $"its report could not be read: {e.Message}";
        }

        progress.Update(this);
    }

    /// <summary>Ctrl+C: StopSuite now if the suite runs, or as soon as StartSuite answers. The watch then sees it end STOPPED.</summary>
    public void RequestStop()
    {
        lock (_gate)
        {
            _stopRequested = true;
            if (_suiteId is { } id && !(Progress is { } last && IsFinished(last.State)))
            {
                _stopping = StopAsync(id);
            }
        }
    }

    /// <summary>The StopSuite call in flight, if any: awaited before the channel goes.</summary>
    public Task Stopping
    {
        get
        {
            lock (_gate)
            {
                return _stopping;
            }
        }
    }

    public void Dispose() => channel.Dispose();

    private async Task WatchAsync(string id, ILabProgress progress)
    {
        for (int attempt = 0; ; attempt++)
        {
            Exception broke;
            using (var silence = new CancellationTokenSource(Silence))
            {
                try
                {
                    using var call = _client.WatchSuite(new WatchSuiteRequest { Id = id }, cancellationToken: silence.Token);
                    while (await call.ResponseStream.MoveNext(silence.Token).ConfigureAwait(false))
                    {
                        silence.CancelAfter(Silence);
                        Progress = call.ResponseStream.Current;
                        progress.Update(this);
                        if (IsFinished(Progress.State))
                        {
                            return;
                        }
                    }

                    broke = new InvalidOperationException("WatchSuite ended before the suite did");
                }
                catch (RpcException e)
                {
                    broke = e;
                }
                catch (OperationCanceledException) when (silence.IsCancellationRequested)
                {
                    broke = new TimeoutException($"no word from the daemon for {Silence.TotalSeconds:0} s");
                }
            }

            // The stream broke before the suite finished: a daemon that still answers is watched again; one that does not is lost.
            Suite suite;
            try
            {
                suite = await _client.GetSuiteAsync(new GetSuiteRequest { Id = id }, deadline: Deadline(TimeSpan.FromSeconds(5))).ConfigureAwait(false);
            }
            catch (RpcException e)
            {
                throw new MachineLostException($"lost mid-suite{Done()}: the watch broke ({Describe(broke)}) and the daemon no longer answers ({Describe(e)})");
            }

            if (IsFinished(suite.State))
            {
                return;
            }

            if (attempt == MaxReconnects)
            {
                throw new MachineLostException($"lost mid-suite{Done()}: the watch broke {MaxReconnects + 1} times, last: {Describe(broke)}");
            }

            await Task.Delay(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        }
    }

    private async Task ReadReportAsync(string id)
    {
        var suite = await _client.GetSuiteAsync(new GetSuiteRequest { Id = id }, deadline: Deadline(CallDeadline)).ConfigureAwait(false);
        Placement = LabPlacement.Of(suite.Environment);
        if (suite.State == SuiteState.Failed)
        {
            Error = $"the suite FAILED on the daemon{Done()}: {suite.Error}";
            return;
        }

        var export = await _client.ExportSuiteAsync(new ExportSuiteRequest { Id = id, Format = ReportFormat.Json }, deadline: Deadline(CallDeadline))
            .ConfigureAwait(false);
        ReportJson = export.Content;
        Report = ReportFile.Read(export.Content);
    }

    private async Task StopAsync(string id)
    {
        try
        {
            await _client.StopSuiteAsync(new StopSuiteRequest { Id = id }, deadline: Deadline(CallDeadline)).ConfigureAwait(false);
        }
        catch (RpcException)
        {
            // The watch says what became of the suite; a daemon that cannot be reached to stop it is lost there too.
        }
    }

    /// <summary>
    /// " after 2 of 6 scenarios": the count as the daemon last told this run (its last WatchSuite message). A daemon
    /// killed just after finishing a scenario may have counted one more that never reached us; there is no one left to ask.
    /// </summary>
    private string Done() => Progress is { ScenariosTotal: > 0 } p ? $" after {p.ScenariosDone} of {p.ScenariosTotal} scenarios" : string.Empty;

    private static bool IsFinished(SuiteState state) => state is SuiteState.Completed or SuiteState.Stopped or SuiteState.Failed;

    private static DateTime Deadline(TimeSpan timeout) => DateTime.UtcNow + timeout;

    /// <summary>A status and its detail ("Unavailable: Error starting gRPC call. HttpRequestException: Connection refused ..."); other errors by message.</summary>
    private static string Describe(Exception e) => e switch
    {
        // "Error connecting to subchannel." says less than the socket's own "Connection refused (10.0.0.5:5051)".
        RpcException { Status.DebugException: { } inner } rpc when !rpc.Status.Detail.Contains(inner.Message, StringComparison.Ordinal) =>
            $"{rpc.StatusCode}: {rpc.Status.Detail} {inner.Message}",
        RpcException rpc => $"{rpc.StatusCode}: {rpc.Status.Detail}",
        _ => e.Message,
    };

    private sealed class MachineLostException(string message) : Exception(message);
}
