using System.Diagnostics;
using System.Globalization;

namespace IpcBench.Transports.Tests;

[Collection(nameof(LightRuns))]
public class ProcessInstanceTests
{
    [Fact]
    public void A_live_process_is_alive_and_identified_by_its_start_time()
    {
        var current = ProcessInstance.Current;
        Assert.Equal(Environment.ProcessId, current.Pid);
        Assert.True(current.StartTicks > 0);
        Assert.True(current.IsAlive);
        Assert.Equal(current, ProcessInstance.Of(Environment.ProcessId));
        Assert.True(ProcessInstance.IsRunning(Environment.ProcessId));
        Assert.True(ProcessInstance.TryParse(current.ToString(), out var parsed));
        Assert.Equal(current, parsed);
    }

    [Fact]
    public void A_pid_with_another_start_time_is_dead()
    {
        var current = ProcessInstance.Current;
        Assert.False((current with { StartTicks = current.StartTicks + 1 }).IsAlive);
        Assert.False((current with { StartTicks = current.StartTicks - 1 }).IsAlive);
    }

    [Fact]
    public void A_reaped_or_never_existing_pid_is_dead()
    {
        using var process = Process.Start("true")!;
        process.WaitForExit();
        Assert.False(ProcessInstance.IsRunning(process.Id));
        Assert.Null(ProcessInstance.Of(process.Id));
        Assert.False(ProcessInstance.IsRunning(999_999_999));
        Assert.False(ProcessInstance.IsRunning(0));
        Assert.False(ProcessInstance.TryParse("garbage", out _));
    }

    [Fact]
    public void A_zombie_is_dead()
    {
        // sh starts a short sleep in the background, then becomes a long sleep by exec: the long sleep is the short
        // one's parent and never waits for it, so once the short one exits it stays a zombie.
        using var parent = Process.Start("sh", ["-c", "sleep 0.05 & exec sleep 30"])!;
        try
        {
            var zombie = WaitForZombieChild(parent.Id, TimeSpan.FromSeconds(10));
            Assert.False(ProcessInstance.IsRunning(zombie));
            Assert.Null(ProcessInstance.Of(zombie));
            Assert.True(ProcessInstance.IsRunning(parent.Id));
        }
        finally
        {
            parent.Kill();
            parent.WaitForExit();
        }
    }

    private static int WaitForZombieChild(int parent, TimeSpan timeout)
    {
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < timeout)
        {
            foreach (var directory in Directory.EnumerateDirectories("/proc"))
            {
                if (!int.TryParse(Path.GetFileName(directory), NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
                {
                    continue;
                }

                string stat;
                try
                {
                    stat = File.ReadAllText(Path.Combine(directory, "stat"));
                }
                catch (IOException)
                {
                    continue;
                }

                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                if (fields[1] == parent.ToString(CultureInfo.InvariantCulture) && fields[0] == "Z")
                {
                    return pid;
                }
            }

            Thread.Sleep(10);
        }

        throw new TimeoutException($"no zombie child of {parent} appeared");
    }
}
