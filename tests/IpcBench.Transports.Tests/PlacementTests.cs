using IpcBench.Transports;
using IpcBench.Workload;
using IpcBench.Workload.Placement;

namespace IpcBench.Transports.Tests;

/// <summary>
/// CPU lists, pinning and raising real threads of this process (read back from /proc), what the process may ask for,
/// and the publisher's sender lag.
/// </summary>
[Collection(nameof(SerialMeasurements))]
public sealed class PlacementTests
{
    [Theory]
    [InlineData("0", "0", new[] { 0 })]
    [InlineData("2-3,6", "2-3,6", new[] { 2, 3, 6 })]
    [InlineData("0,1,2", "0-2", new[] { 0, 1, 2 })]
    [InlineData(" 6 , 2-3 ,3", "2-3,6", new[] { 2, 3, 6 })]
    [InlineData("", "", new int[0])]
    public void CpuSet_ParsesAndFormatsTheKernelsSyntax(string text, string canonical, int[] cpus)
    {
        var set = CpuSet.Parse(text);

        Assert.Equal(cpus, set.Cpus);
        Assert.Equal(canonical, set.ToString());
        Assert.Equal(set, CpuSet.FromMask(set.ToMask()));
    }

    [Theory]
    [InlineData("a")]
    [InlineData("1,,2")]
    [InlineData("3-1")]
    [InlineData("-1")]
    [InlineData("0-")]
    [InlineData("99999")]
    [InlineData("1.5")]
    public void CpuSet_RefusesWhatIsNotACpuList_SayingWhy(string text)
    {
        var e = Assert.Throws<FormatException>(() => CpuSet.Parse(text));

        Assert.False(string.IsNullOrWhiteSpace(e.Message));
    }

    [Fact]
    public void CpuSet_SpreadsIndexesOverTheListInOrder()
    {
        var set = CpuSet.Parse("2-3,6");

        Assert.Equal([2, 3, 6, 2], Enumerable.Range(0, 4).Select(set.AtWrapped));
    }

    [Fact]
    public void AllowedCpus_OfThisProcess_IsItsAffinity_AndNamesACpuThatDoesNotExist()
    {
        var allowed = AllowedCpus.OfThisProcess();

        Assert.Equal(ProcStatus.Field(Environment.ProcessId, null, "Cpus_allowed_list"), allowed.Allowed.ToString());
        Assert.Null(allowed.WhyNot(allowed.Allowed));
        var why = allowed.WhyNot(CpuSet.Parse("8191"));
        Assert.NotNull(why);
        Assert.Contains("8191 does not exist", why, StringComparison.Ordinal);
        Assert.Contains(allowed.Allowed.ToString(), why, StringComparison.Ordinal);
    }

    [Fact]
    public void AllowedCpus_NamesTheCgroup_WhenItIsWhatExcludesTheCpu()
    {
        var allowed = new AllowedCpus(CpuSet.Parse("0"), CpuSet.Parse("0-3"), CpuSet.Parse("0"), "/sys/fs/cgroup/x/cpuset.cpus.effective");

        var why = allowed.WhyNot(CpuSet.Parse("0,2"));

        Assert.Equal("CPU 2 is not in the daemon's allowed set 0: the daemon's cgroup allows only 0 (/sys/fs/cgroup/x/cpuset.cpus.effective)", why);
    }

    [Fact]
    public void ThreadPlacement_PinsTheThreadThatAppliesIt_AndNoOther()
    {
        var allowed = AllowedCpus.OfThisProcess().Allowed;
        int cpu = allowed.Cpus[^1];
        string? pinned = null;
        string? sibling = null;
        var thread = new Thread(() =>
        {
            new ThreadPlacement(CpuSet.Of([cpu]), 0).ApplyToCurrentThread("test");
            pinned = ProcStatus.ThisThreadField("Cpus_allowed_list");
        });
        thread.Start();
        thread.Join();
        sibling = ProcStatus.ThisThreadField("Cpus_allowed_list");

        Assert.Equal(cpu.ToString(System.Globalization.CultureInfo.InvariantCulture), pinned);
        Assert.Equal(allowed.ToString(), sibling);
    }

    [Fact]
    public void ThreadPlacement_OnACpuOutsideTheAllowedSet_FailsNamingTheCall()
    {
        Exception? failure = null;
        var thread = new Thread(() => failure = Record.Exception(() => new ThreadPlacement(CpuSet.Parse("8191"), 0).ApplyToCurrentThread("publisher 0")));
        thread.Start();
        thread.Join();

        var e = Assert.IsType<PlacementException>(failure);
        Assert.Contains("publisher 0: could not pin to CPU 8191: sched_setaffinity failed with errno", e.Message, StringComparison.Ordinal);
    }

    /// <summary>SCHED_FIFO on a thread that only sleeps: permitted here (the kernel's answer is read back) or refused as predicted.</summary>
    [Fact]
    public void ThreadPlacement_RealtimePriority_IsTakenWhenPermitted_ElseRefused()
    {
        const int priority = 5;
        bool permitted = PlacementLimits.OfThisProcess().WhyNotPriority(priority) is null;
        string? stat = null;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            failure = Record.Exception(() => new ThreadPlacement(null, priority).ApplyToCurrentThread("test"));
            stat = File.ReadAllText("/proc/thread-self/stat");
        });
        thread.Start();
        thread.Join();

        if (permitted)
        {
            Assert.Null(failure);
            var (rtPriority, policy) = ProcStatus.Scheduling(stat!);
            Assert.Equal(1, policy);
            Assert.Equal(priority, rtPriority);
        }
        else
        {
            Assert.Contains("sched_setscheduler failed", Assert.IsType<PlacementException>(failure).Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void RealtimePermission_NamesWhatIsMissing_WithTheCurrentValues()
    {
        const ulong capSysNice = 1UL << 23;

        Assert.Null(RealtimePermission.WhyNot(50, capSysNice, 0, 0));
        Assert.Null(RealtimePermission.WhyNot(10, 0, 10, 20));
        Assert.Null(RealtimePermission.WhyNot(0, 0, 0, 0));
        var why = RealtimePermission.WhyNot(50, 0, 10, 20);
        Assert.NotNull(why);
        Assert.Contains("CAP_SYS_NICE or RLIMIT_RTPRIO >= 50", why, StringComparison.Ordinal);
        Assert.Contains("RLIMIT_RTPRIO soft 10, hard 20", why, StringComparison.Ordinal);
        Assert.Contains("CAP_IPC_LOCK", RealtimePermission.WhyNotLockMemory(0, 8 << 20), StringComparison.Ordinal);
        Assert.Null(RealtimePermission.WhyNotLockMemory(1UL << 14, 0));
        Assert.Null(RealtimePermission.WhyNotLockMemory(0, ulong.MaxValue));
    }

    [Fact]
    public void RealtimeRuntime_IsTheKernelsValue()
    {
        var expected = long.Parse(File.ReadAllText("/proc/sys/kernel/sched_rt_runtime_us").Trim(), System.Globalization.CultureInfo.InvariantCulture);

        Assert.Equal(expected, RealtimePermission.RealtimeRuntimeMicroseconds());
        Assert.Null(RealtimePermission.RealtimeRuntimeMicroseconds("/nonexistent/sched_rt_runtime_us"));
    }

    [Fact]
    public void SenderLag_IsRecordedPerMessage_InRateLimitedRunsOnly()
    {
        var transport = TransportRegistry.CreateDefault().Find("channels")!;

        var limited = InProcessLoop.Run(transport, 1, 1, 8, messagesPerPublisher: 2000, ratePerPublisher: 20_000);
        var closed = InProcessLoop.Run(transport, 1, 1, 8, messagesPerPublisher: 2000);

        Assert.Equal(2000, limited.Sent);
        Assert.Equal(2000, limited.SenderLag.TotalCount);
        Assert.Equal(0, closed.SenderLag.TotalCount);
    }

}

/// <summary>Reads a process's or thread's /proc status and stat.</summary>
internal static class ProcStatus
{
    public static string? Field(int pid, int? tid, string name)
    {
        var path = tid is null ? $"/proc/{pid}/status" : $"/proc/{pid}/task/{tid}/status";
        return File.ReadLines(path).FirstOrDefault(l => l.StartsWith(name + ":", StringComparison.Ordinal))?[(name.Length + 1)..].Trim();
    }

    /// <summary>A field of the calling thread's own status (/proc/thread-self).</summary>
    public static string? ThisThreadField(string name) =>
        File.ReadLines("/proc/thread-self/status").FirstOrDefault(l => l.StartsWith(name + ":", StringComparison.Ordinal))?[(name.Length + 1)..].Trim();

    /// <summary>rt_priority (field 40) and policy (field 41) of a stat line; the name in parentheses may hold spaces.</summary>
    public static (int RtPriority, int Policy) Scheduling(string stat)
    {
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return (int.Parse(fields[37], System.Globalization.CultureInfo.InvariantCulture), int.Parse(fields[38], System.Globalization.CultureInfo.InvariantCulture));
    }
}
