using System.Text.RegularExpressions;
using IpcBench.Daemon.Tests.Infrastructure;
using IpcBench.Workload.Placement;
using Xunit.Abstractions;
using static IpcBench.Daemon.Tests.Infrastructure.DeployFiles;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// deploy/systemd/ipcbench.service.d/realtime.conf, the drop-in a lab machine adds for realtime_priority and
/// lock_memory: it lifts exactly what the hardened unit forbids them, as systemd itself reads the unit with it.
/// </summary>
[Collection(LightCollection.Name)]
public sealed partial class DeployFilesSystemdRealtimeTests(ITestOutputHelper output) : IDisposable
{
    private static readonly string[] Capabilities = ["CAP_IPC_LOCK", "CAP_SYS_NICE"];

    /// <summary>What sched_setscheduler/mlockall need, and what systemd-analyze security rates for them: nothing more may change.</summary>
    private static readonly string[] Lifted =
        ["AmbientCapabilities=", "CapabilityBoundingSet=~CAP_IPC_LOCK", "CapabilityBoundingSet=~CAP_SYS_(NICE|RESOURCE)", "RestrictRealtime="];

    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "systemd-" + Guid.NewGuid().ToString("N")[..10]);

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    private static string Unit => File.ReadAllText(Repo("deploy", "systemd", "ipcbench.service"));

    private static string DropIn => File.ReadAllText(Repo("deploy", "systemd", "ipcbench.service.d", "realtime.conf"));

    /// <summary>Every Key=value of a unit file or drop-in, in order (a key may repeat), comments left out.</summary>
    private static List<(string Key, string Value)> Settings(string text) =>
        [.. Setting().Matches(text).Select(m => (m.Groups[1].Value, m.Groups[2].Value.Trim()))];

    /// <summary>
    /// The unit as installed: under a name of its own (a real ipcbench.service's drop-ins in /etc would apply to that
    /// name), ExecStart a binary that exists, and, when asked, the drop-in in its .d directory.
    /// </summary>
    private string Install(bool withDropIn, string extra = "")
    {
        var name = "ipcbench-" + Path.GetFileName(_directory);
        Directory.CreateDirectory(_directory);
        var unit = Path.Combine(_directory, name + ".service");
        File.WriteAllText(unit, Unit.Replace("ExecStart=/opt/ipcbench/BenchDaemon", "ExecStart=/bin/true", StringComparison.Ordinal));
        var dropIns = unit + ".d";
        if (Directory.Exists(dropIns))
        {
            Directory.Delete(dropIns, recursive: true);
        }

        if (withDropIn)
        {
            Directory.CreateDirectory(dropIns);
            File.WriteAllText(Path.Combine(dropIns, "realtime.conf"), DropIn + extra);
        }

        return unit;
    }

    [Fact]
    public void DropIn_GrantsBothCapabilities_LiftsRestrictRealtime_AndSetsOnlyWhatTheyNeed()
    {
        // The drop-in is needed because the unit forbids both; if the unit stops doing so this test says so.
        var unit = Settings(Unit);
        Assert.Contains(("CapabilityBoundingSet", ""), unit);
        Assert.Contains(("AmbientCapabilities", ""), unit);
        Assert.Contains(("RestrictRealtime", "yes"), unit);
        Assert.DoesNotContain(unit, s => s.Key is "LimitRTPRIO" or "LimitMEMLOCK");

        var dropIn = Settings(DropIn);
        Assert.Equal(["AmbientCapabilities", "CapabilityBoundingSet", "LimitMEMLOCK", "LimitRTPRIO", "RestrictRealtime"], dropIn.Select(s => s.Key).Order());
        var values = dropIn.ToDictionary(s => s.Key, s => s.Value);
        Assert.Equal(Capabilities, values["CapabilityBoundingSet"].Split(' ', StringSplitOptions.RemoveEmptyEntries).Order());
        Assert.Equal(Capabilities, values["AmbientCapabilities"].Split(' ', StringSplitOptions.RemoveEmptyEntries).Order());
        Assert.Equal("no", values["RestrictRealtime"]);
        Assert.Equal(RealtimePermission.MaxPriority.ToString(System.Globalization.CultureInfo.InvariantCulture), values["LimitRTPRIO"]);
        Assert.Equal("infinity", values["LimitMEMLOCK"]);
        Assert.StartsWith("[Service]", DropIn.Split('\n').First(l => l.Length > 0 && !l.StartsWith('#')), StringComparison.Ordinal);
    }

    /// <summary>
    /// systemd-analyze security reads the unit with its drop-ins as systemd would (merging the capability sets onto the
    /// unit's empty ones): with the drop-in, exactly the checks for ambient capabilities, CAP_IPC_LOCK, CAP_SYS_NICE and
    /// realtime scheduling turn from passed to failed; every other hardening check is as without it.
    /// </summary>
    [Fact]
    public async Task DropIn_AsSystemdMergesIt_ChangesOnlyTheRealtimeAndLockingChecks()
    {
        if (SystemdAnalyze is not { } analyze)
        {
            output.WriteLine("systemd-analyze not found: the drop-in was only checked textually");
            return;
        }

        async Task<HashSet<string>> FailedChecks(bool withDropIn)
        {
            var (exitCode, stdout, stderr) = await RunAsync(analyze, "security", "--offline=yes", "--no-pager", Install(withDropIn));
            output.WriteLine(stdout + stderr);
            Assert.True(exitCode == 0, $"systemd-analyze security exited {exitCode}:\n{stderr}");
            var checks = SecurityCheck().Matches(stdout).ToList();
            Assert.True(checks.Count > 40, "systemd-analyze security printed no checks");
            return [.. checks.Where(c => c.Groups[1].Value is "✗" or "-").Select(c => c.Groups[2].Value)];
        }

        var without = await FailedChecks(withDropIn: false);
        var with = await FailedChecks(withDropIn: true);
        Assert.Equal(Lifted, with.Except(without).Order());
        Assert.Empty(without.Except(with));
    }

    /// <summary>The unit's system call filter must let the daemon and its agents call what the two settings use.</summary>
    [Fact]
    public async Task SystemCallFilter_WithTheDropIn_AllowsSchedulingAndLockingCalls()
    {
        if (SystemdAnalyze is not { } analyze)
        {
            output.WriteLine("systemd-analyze not found: the system call filter was not expanded");
            return;
        }

        var filters = Settings(Unit).Concat(Settings(DropIn)).Where(s => s.Key == "SystemCallFilter").Select(s => s.Value).ToList();
        Assert.NotEmpty(filters);
        Assert.DoesNotContain(filters, f => f.StartsWith('~'));
        var pending = new Queue<string>(filters.SelectMany(f => f.Split(' ', StringSplitOptions.RemoveEmptyEntries)));
        var allowed = new HashSet<string>(StringComparer.Ordinal);
        while (pending.TryDequeue(out var entry))
        {
            if (!allowed.Add(entry) || !entry.StartsWith('@'))
            {
                continue;
            }

            // A group lists its system calls and the groups it includes (@system-service includes @resources, @memlock, ...).
            var (exitCode, stdout, stderr) = await RunAsync(analyze, "syscall-filter", "--no-pager", entry);
            Assert.True(exitCode == 0, $"systemd-analyze syscall-filter {entry} exited {exitCode}:\n{stderr}");
            foreach (var line in stdout.Split('\n').Skip(1).Select(l => l.Trim()).Where(l => l.Length > 0 && !l.StartsWith('#')))
            {
                pending.Enqueue(line);
            }
        }

        // What IpcBench.Workload's LinuxScheduling calls for pinning, SCHED_FIFO and mlockall.
        Assert.All(new[] { "sched_setaffinity", "sched_setscheduler", "mlockall", "munlockall" }, call => Assert.Contains(call, allowed));
    }

    /// <summary>
    /// systemd-analyze verify on the unit with the drop-in beside it. Unknown or misspelt settings are only warnings with
    /// exit code 0, so any message naming either file fails; a deliberately misspelt copy shows the drop-in is read.
    /// </summary>
    [Fact]
    public async Task UnitWithDropIn_PassesSystemdAnalyzeVerify()
    {
        if (SystemdAnalyze is not { } analyze)
        {
            output.WriteLine("systemd-analyze not found: the drop-in was only checked textually");
            return;
        }

        async Task<List<string>> Complaints(string extra)
        {
            var unit = Install(withDropIn: true, extra);
            var (exitCode, stdout, stderr) = await RunAsync(analyze, "verify", unit);
            Assert.True(exitCode == 0, $"systemd-analyze verify exited {exitCode}:\n{stderr}{stdout}");
            return [.. (stderr + stdout).Split('\n').Where(l => l.Contains(Path.GetFileName(unit), StringComparison.Ordinal) || l.Contains("realtime.conf", StringComparison.Ordinal))];
        }

        var complaints = await Complaints("");
        Assert.True(complaints.Count == 0, string.Join("\n", complaints));
        Assert.NotEmpty(await Complaints("LimitRTPRI0=99\n"));
        Assert.True(Directory.Exists(Repo("deploy", "systemd", "ipcbench.service.d")), "the drop-in directory is named after the unit file");
    }

    [GeneratedRegex(@"^([A-Za-z]+)=(.*)$", RegexOptions.Multiline)]
    private static partial Regex Setting();

    /// <summary>A check and its setting; outside a UTF-8 locale systemd marks passed with + and failed with -.</summary>
    [GeneratedRegex(@"^(✓|✗|\+|-) (\S+)", RegexOptions.Multiline)]
    private static partial Regex SecurityCheck();
}
