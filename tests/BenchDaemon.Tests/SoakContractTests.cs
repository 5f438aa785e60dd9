using Grpc.Core;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.V1;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// A plain StartScenario without a duration is a soak: GetScenario shows it judged while it runs, /metrics exports the
/// verdict and the growth of each process's resources, and StopScenario keeps the judgement in the stored result. On the
/// in-process host (channels, so the daemon is the only process); the rules themselves are <see cref="SoakJudgeTests"/>'.
/// </summary>
[Collection(DaemonCollection.Name)]
public sealed class SoakContractTests(ITestOutputHelper output)
{
    [Fact]
    public async Task AnOpenEndedScenario_IsJudgedWhileItRuns_InGetScenarioAndMetrics_AndKeepsItsJudgementWhenStopped()
    {
        await using var daemon = await InProcessDaemon.StartAsync("--IpcBench:SoakPointSeconds=1", "--IpcBench:SoakResourceWarmupSeconds=5");
        using var log = daemon.LogTo(output);
        // Paced with BLOCK waits, so neither the publisher nor the subscribers (which yield-spin by default on channels)
        // take a core the daemon's tick needs.
        var spec = Specs.Stream("channels", publishers: 1, subscribers: 2, duration: null, warmup: Specs.Milliseconds(200)).Paced(5000);
        var started = await daemon.StartScenarioAsync(spec);

        var judging = await daemon.WaitForAsync(started.Id, s => s.Stats?.Soak is { Verdict: SoakVerdict.Judging }, TimeSpan.FromSeconds(20), "a JUDGING soak");
        Assert.Contains("judged from 6 points on", judging.Stats.Soak.Reasons.Single(), StringComparison.Ordinal);

        // Judged once six points passed (and the resources' own six): what it says of the host process is not this
        // test's business (SoakJudgeTests holds the rules); that every surface says the same is.
        var judged = await daemon.WaitForAsync(started.Id,
            s => s.Stats?.Soak is { Verdict: not SoakVerdict.Judging } soak && soak.Processes.Count > 0 && soak.Processes[0].Resources[0].Trend.SinceStart?.Points >= 3,
            TimeSpan.FromSeconds(40), "a judged soak with its processes");
        output.WriteLine(judged.Stats.Soak.ToString());
        await daemon.StopScenarioAsync(started.Id);
        var final = await daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(20));
        Assert.Equal(ScenarioState.Stopped, final.State);
        Assert.Equal(0ul, final.Stats.MessagesLost);
        var soak = final.Stats.Soak;
        Assert.True(soak.JudgedOver.ToTimeSpan() >= judged.Stats.Soak.JudgedOver.ToTimeSpan(), "the stopped result keeps the judgement up to the stop");
        Assert.NotEqual(SoakVerdict.Judging, soak.Verdict);
        Assert.NotEqual(SoakVerdict.Losing, soak.Verdict);
        Assert.Equal(soak.Verdict == SoakVerdict.Holding, soak.Reasons.Count == 0);
        Assert.InRange(soak.Throughput.SinceStart.Mean, 0.9 * 10_000, 1.1 * 10_000);
        Assert.True(soak.Throughput.SinceStart.CiLowPerHour <= soak.Throughput.SinceStart.PerHour, "the interval holds its slope");
        Assert.True(soak.LastP99 is not null, "the latest point's p99");
        var daemonProcess = Assert.Single(soak.Processes);
        Assert.Equal(("daemon", -1), (daemonProcess.Role, daemonProcess.Index));
        Assert.Equal(
            [SoakResource.ManagedHeapBytes, SoakResource.RssBytes, SoakResource.SharedMemoryBytes, SoakResource.Threads, SoakResource.Descriptors,
             SoakResource.GcCommittedBytes, SoakResource.NativeBytes],
            daemonProcess.Resources.Select(r => r.Resource));
        Assert.All(daemonProcess.Resources.Where(r => r.Resource != SoakResource.SharedMemoryBytes), r => Assert.True(r.Latest > 0, $"{r.Resource} read"));

        // The final snapshot's series: the verdict the result holds, and a growth per resource.
        var metrics = MetricsText.Parse(await daemon.MetricsTextAsync());
        var verdicts = metrics.Of("ipcbench_soak_verdict", started.Id).ToDictionary(s => s.Label("verdict"), s => s.Value);
        Assert.Equal(["drifting", "holding", "judging", "leaking", "losing"], verdicts.Keys.Order());
        Assert.Equal(soak.Verdict.ToString().ToLowerInvariant(), Assert.Single(verdicts, v => v.Value == 1).Key);
        Assert.Equal(["descriptors", "gc_committed_bytes", "managed_heap_bytes", "native_bytes", "rss_bytes", "shared_memory_bytes", "threads"],
            metrics.Of("ipcbench_soak_resource_growth_per_second", started.Id).Select(s => s.Label("resource")).Order());
        Assert.Single(metrics.Of("ipcbench_soak_throughput_drift_ratio", started.Id), s => s.Label("span") == "since_start");

        await SoakPageShowsTheJudgementAndItsPoints(daemon, final);
        await AStoppedSoakResumes_AsANewScenarioLinkedToIt(daemon, final);
    }

    /// <summary>EXPORT_FORMAT_SOAK_HTML: the verdict, the reasons and the persisted points (one a second here) as the page's data.</summary>
    private static async Task SoakPageShowsTheJudgementAndItsPoints(InProcessDaemon daemon, Scenario soak)
    {
        var page = await daemon.ExportScenariosAsync(new ExportScenariosRequest { Ids = { soak.Id }, Format = ExportFormat.SoakHtml });
        Assert.Equal(("text/html", 1), (page.ContentType, page.ScenarioCount));
        Assert.Contains($"<strong>{soak.Stats.Soak.Verdict.ToString().ToUpperInvariant()}</strong>", page.Content, StringComparison.Ordinal);
        var data = System.Text.RegularExpressions.Regex.Match(page.Content, "<script type=\"application/json\" id=\"soak-data\">(.*?)</script>", System.Text.RegularExpressions.RegexOptions.Singleline);
        using var json = System.Text.Json.JsonDocument.Parse(data.Groups[1].Value);
        var scenario = json.RootElement.GetProperty("scenarios").EnumerateArray().Single();
        var points = scenario.GetProperty("points").EnumerateArray().ToList();
        // One point a second of measured time, each with its rate; the judge's own count is a lower bound.
        Assert.InRange(points.Count, soak.Stats.Soak.Throughput.SinceStart.Points, int.MaxValue);
        Assert.All(points, p => Assert.InRange(p.GetProperty("rate").GetDouble(), 1, double.MaxValue));
        Assert.Contains(scenario.GetProperty("processes").EnumerateArray(), p => p.GetProperty("name").GetString() == "daemon" && p.GetProperty("resource").GetString() == "rss");
    }

    /// <summary>resume_from: the same spec, linked; what cannot be resumed is refused naming the field.</summary>
    private static async Task AStoppedSoakResumes_AsANewScenarioLinkedToIt(InProcessDaemon daemon, Scenario stopped)
    {
        var resumed = await daemon.Control.StartScenarioAsync(new StartScenarioRequest { ResumeFrom = stopped.Id });
        try
        {
            Assert.Equal(stopped.Id, resumed.Scenario.ResumedFrom);
            Assert.Equal(stopped.Spec, resumed.Scenario.Spec);
            Assert.Equal(stopped.Id, (await daemon.GetScenarioAsync(resumed.Id)).ResumedFrom);

            var both = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.StartScenarioAsync(new StartScenarioRequest { ResumeFrom = stopped.Id, Spec = stopped.Spec }));
            Assert.Equal(StatusCode.InvalidArgument, both.StatusCode);
            Assert.StartsWith("spec:", both.Status.Detail, StringComparison.Ordinal);
            var unknown = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.StartScenarioAsync(new StartScenarioRequest { ResumeFrom = "000000000000" }));
            Assert.Equal(StatusCode.NotFound, unknown.StatusCode);
            Assert.Contains("resume_from", unknown.Status.Detail, StringComparison.Ordinal);
            var running = await Assert.ThrowsAsync<RpcException>(async () => await daemon.Control.StartScenarioAsync(new StartScenarioRequest { ResumeFrom = resumed.Id }));
            Assert.Equal(StatusCode.FailedPrecondition, running.StatusCode);
            Assert.Contains("only a finished one can be resumed", running.Status.Detail, StringComparison.Ordinal);
        }
        finally
        {
            await daemon.StopScenarioAsync(resumed.Id);
            await daemon.WaitUntilFinishedAsync(resumed.Id, TimeSpan.FromSeconds(20));
        }
    }

    /// <summary>A subscriber that cannot keep up with its offered rate (100 M msg/s over in-process channels) is DRIFTING, and says by how much.</summary>
    [Fact]
    public async Task ASoakOfferedMoreThanItsSubscriberTakes_IsDrifting()
    {
        await using var daemon = await InProcessDaemon.StartAsync("--IpcBench:SoakPointSeconds=1", "--IpcBench:SoakResourceWarmupSeconds=5");
        using var log = daemon.LogTo(output);
        var started = await daemon.StartScenarioAsync(Specs.Stream("channels", publishers: 1, subscribers: 1, duration: null, warmup: Specs.Milliseconds(200))
            .With(s => s.RatePerPublisher = 100_000_000));
        try
        {
            var drifting = await daemon.WaitForAsync(started.Id, s => s.Stats?.Soak is { Verdict: SoakVerdict.Drifting }, TimeSpan.FromSeconds(30), "a DRIFTING soak");
            var reason = Assert.Single(drifting.Stats.Soak.Reasons, r => r.StartsWith("delivers ", StringComparison.Ordinal));
            Assert.Contains("of the 100000000 offered", reason, StringComparison.Ordinal);
        }
        finally
        {
            await daemon.StopScenarioAsync(started.Id);
            await daemon.WaitUntilFinishedAsync(started.Id, TimeSpan.FromSeconds(20));
        }
    }

    [Fact]
    public async Task ATimedScenarioTooShortToJudge_HasNoSoak()
    {
        await using var daemon = await InProcessDaemon.StartAsync("--IpcBench:SoakPointSeconds=1", "--IpcBench:SoakResourceWarmupSeconds=5");
        var done = await daemon.RunScenarioAsync(Specs.Stream("channels", 1, 1, Specs.Seconds(2)).Paced(5000));
        Assert.Equal(ScenarioState.Completed, done.State);
        Assert.Null(done.Stats.Soak);
    }
}
