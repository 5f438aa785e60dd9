using System.Globalization;
using System.Text;
using System.Text.Json;

namespace IpcBench.Soak;

public sealed record SoakCheck(string Name, bool Passed, string Detail);

/// <summary>
/// The soak's figures and its verdict: zero loss, live heaps of the daemon and the agents within
/// <see cref="LiveHeapGrowth.Allowed"/> over the window, no descriptor or /dev/shm growth. Resident memory is
/// reported, not judged: it moves with the GC's budgets and with mapped /dev/shm pages (it once grew 20 % while the
/// daemon's GC heap fell).
/// </summary>
public sealed class SoakReport
{
    /// <summary>/dev/shm is shared with the rest of the machine; a page or so of noise is not ours.</summary>
    public const long SharedMemoryToleranceBytes = 1 << 20;

    public SoakReport(SoakOptions options, int daemonPid, MachineSample before, MachineSample after, int ringFilesLeft, int agentsLeft, IReadOnlyList<TransportResult> results)
    {
        Options = options;
        DaemonPid = daemonPid;
        Before = before;
        After = after;
        RingFilesLeft = ringFilesLeft;
        AgentsLeft = agentsLeft;
        Results = results;
        Checks = [.. Judge()];
    }

    public SoakOptions Options { get; }

    public int DaemonPid { get; }

    public MachineSample Before { get; }

    public MachineSample After { get; }

    public int RingFilesLeft { get; }

    public int AgentsLeft { get; }

    public IReadOnlyList<TransportResult> Results { get; }

    public IReadOnlyList<SoakCheck> Checks { get; }

    public bool Passed => Checks.All(c => c.Passed);

    private IEnumerable<SoakCheck> Judge()
    {
        foreach (var r in Results)
        {
            // The scenarios run until the soak stops them: STOPPED is the only good end.
            yield return new($"{r.Transport}: ran until stopped", r.State == "Stopped", r.Error.Length > 0 ? $"{r.State}: {r.Error}" : r.State);
            yield return new($"{r.Transport}: nothing lost, corrupted or duplicated", r.Lost + r.Corrupted + r.Duplicated == 0 && r.Received > 0,
                Invariant($"received {r.Received}, lost {r.Lost}, corrupted {r.Corrupted}, duplicated {r.Duplicated}"));
            if (!Options.Parallel || r == Results[0])
            {
                // All at once, the transports share the daemon and its one pair of readings.
                yield return LiveHeap(Options.Parallel ? "daemon" : $"{r.Transport}: daemon", Options.Parallel ? Results.Count : 1, r.DaemonLiveFirst, r.DaemonLiveLast, r.LiveHeapSeconds);
            }

            if (r.HasAgents)
            {
                yield return LiveHeap($"{r.Transport}: agents", Options.Subscribers, r.AgentsLiveFirst, r.AgentsLiveLast, r.LiveHeapSeconds);
                yield return new($"{r.Transport}: agents' descriptors did not grow", r.AgentDescriptorsLast <= r.AgentDescriptorsFirst,
                    Invariant($"{r.AgentDescriptorsFirst} -> {r.AgentDescriptorsLast}"));
            }

            if (!Options.Parallel)
            {
                yield return new($"{r.Transport}: daemon descriptors back where they were", r.DaemonDescriptorsAfter <= r.DaemonDescriptorsBefore,
                    Invariant($"{r.DaemonDescriptorsBefore} before, {r.DaemonDescriptorsAfter} after"));
                yield return new($"{r.Transport}: /dev/shm back where it was", r.SharedMemoryUsedAfter <= r.SharedMemoryUsedBefore + SharedMemoryToleranceBytes,
                    $"{SoakSession.Mib(r.SharedMemoryUsedBefore)} before, {SoakSession.Mib(r.SharedMemoryUsedPeak)} at most while running, {SoakSession.Mib(r.SharedMemoryUsedAfter)} after");
            }
        }

        yield return new("daemon descriptors after the soak", After.DaemonDescriptors <= Before.DaemonDescriptors,
            Invariant($"{Before.DaemonDescriptors} before, {After.DaemonDescriptors} after") + NewDescriptors(Before.DaemonDescriptorTargets, After.DaemonDescriptorTargets));
        yield return new("/dev/shm after the soak", After.SharedMemoryUsedBytes <= Before.SharedMemoryUsedBytes + SharedMemoryToleranceBytes,
            $"{SoakSession.Mib(Before.SharedMemoryUsedBytes)} before, {SoakSession.Mib(After.SharedMemoryUsedBytes)} after");
        yield return new("no ring files left", RingFilesLeft == 0, Invariant($"{RingFilesLeft} /dev/shm/ipcbench.ring.{DaemonPid}.* files"));
        yield return new("no agents left", AgentsLeft == 0, Invariant($"{AgentsLeft} children of the daemon"));
    }

    private static SoakCheck LiveHeap(string who, int sources, LiveHeap? first, LiveHeap? last, double seconds)
    {
        long allowed = LiveHeapGrowth.Allowed(sources, seconds);
        return new($"{who} live heap within its bound", first is not null && last is not null && !LiveHeapGrowth.Leaked(first, last, allowed),
            LiveHeapGrowth.Describe(first, last, seconds, allowed));
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    public string ToMarkdown()
    {
        var md = new StringBuilder();
        // InvariantGlobalization (Directory.Build.props): numbers format the same everywhere.
        md.AppendLine($"## Soak: {Options.Publishers}:{Options.Subscribers} ALL_TO_ALL, {Options.PayloadBytes} B FULL, " +
            $"{(Options.RatePerPublisher is { } rate ? $"{rate:0.##} msg/s per publisher" : "closed loop")}, " +
            $"{Options.Duration.TotalSeconds:0} s measured after {Options.Warmup.TotalSeconds:0} s warmup per transport{(Options.Parallel ? ", all transports at once" : ", one transport after another")}");
        md.AppendLine();
        md.AppendLine("| transport | wait | msg/s first tenth | msg/s last tenth | last/first | lost | daemon RSS | daemon GC heap | agents RSS | agents GC heap | agents alloc/s | agent fds | daemon fds | /dev/shm before → peak → after |");
        md.AppendLine("|---|---|---:|---:|---:|---:|---|---|---|---|---:|---|---|---|");
        foreach (var r in Results)
        {
            md.AppendLine(
                $"| {r.Transport} | {r.WaitStrategy} | {SoakSession.Rate(r.FirstTenthMessagesPerSecond)} | {SoakSession.Rate(r.LastTenthMessagesPerSecond)} | " +
                $"{(r.FirstTenthMessagesPerSecond > 0 ? r.LastTenthMessagesPerSecond / r.FirstTenthMessagesPerSecond : 0):0.00} | {r.Lost} | " +
                $"{Change(r.DaemonResidentBytesFirst, r.DaemonResidentBytesLast)} | {Change(r.DaemonHeapBytesFirst, r.DaemonHeapBytesLast)} | " +
                $"{Change(r.AgentsResidentBytesFirst, r.AgentsResidentBytesLast)} | {Change(r.AgentsHeapBytesFirst, r.AgentsHeapBytesLast)} | {r.AgentsAllocatedBytesPerSecond / 1024:0.0} KiB | " +
                $"{r.AgentDescriptorsFirst} → {r.AgentDescriptorsLast} | {r.DaemonDescriptorsBefore} → {r.DaemonDescriptorsAfter} | " +
                $"{SoakSession.Mib(r.SharedMemoryUsedBefore)} → {SoakSession.Mib(r.SharedMemoryUsedPeak)} → {SoakSession.Mib(r.SharedMemoryUsedAfter)} |");
        }

        md.AppendLine();
        md.AppendLine("First/last: means over the first and last tenth of each measured window (a sample a second); agents: the sum over the scenario's 4 agents.");
        md.AppendLine();
        foreach (var check in Checks)
        {
            md.AppendLine($"- {(check.Passed ? "PASS" : "FAIL")} {check.Name}: {check.Detail}");
        }

        md.AppendLine();
        md.AppendLine(Passed ? "Soak passed." : $"Soak FAILED: {Checks.Count(c => !c.Passed)} of {Checks.Count} checks.");
        return md.ToString();
    }

    private static string Change(long first, long last) =>
        $"{SoakSession.Mib(first)} → {SoakSession.Mib(last)} ({TransportResult.Growth(first, last) * 100:+0.0;-0.0} %)";

    public string ToJson() => JsonSerializer.Serialize(new
    {
        options = new
        {
            durationSeconds = Options.Duration.TotalSeconds,
            warmupSeconds = Options.Warmup.TotalSeconds,
            Options.Parallel,
            Options.PayloadBytes,
            Options.RatePerPublisher,
            wait = Options.Wait?.ToString(),
            Options.Publishers,
            Options.Subscribers,
        },
        passed = Passed,
        daemonPid = DaemonPid,
        before = Before,
        after = After,
        ringFilesLeft = RingFilesLeft,
        agentsLeft = AgentsLeft,
        results = Results,
        checks = Checks,
    }, JsonOptions);

    private static readonly JsonSerializerOptions JsonOptions = new() { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.CamelCase };

    /// <summary>"; new: socket:[123], /path" for the descriptors <paramref name="after"/> holds beyond <paramref name="before"/>.</summary>
    private static string NewDescriptors(IReadOnlyList<string> before, IReadOnlyList<string> after)
    {
        var left = before.GroupBy(t => t).ToDictionary(g => g.Key, g => g.Count());
        var added = after.Where(t => !left.TryGetValue(t, out int n) || (left[t] = n - 1) < 0).ToList();
        return added.Count == 0 ? string.Empty : "; new: " + string.Join(", ", added);
    }
}
