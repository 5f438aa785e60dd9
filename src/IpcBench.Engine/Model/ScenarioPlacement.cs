using IpcBench.Workload.Placement;

namespace IpcBench.Daemon.Model;

/// <summary>
/// Where a scenario's hot loops run, validated: publisher i on the i-th CPU of <see cref="PublisherCpus"/> and
/// subscriber j on the j-th of <see cref="SubscriberCpus"/> (wrapping), each at <see cref="RealtimePriority"/>.
/// </summary>
/// <param name="PublisherCpus">Empty: the kernel places the publishers.</param>
/// <param name="SubscriberCpus">Empty: the kernel places the subscribers.</param>
/// <param name="RealtimePriority">0: normal scheduling; 1..99: SCHED_FIFO.</param>
/// <param name="LockMemory">mlockall in the daemon while the scenario runs and in its agents.</param>
/// <param name="MaxNoisePercent">The bound on others' CPU during the scenario; null: none.</param>
public sealed record ScenarioPlacement(CpuSet PublisherCpus, CpuSet SubscriberCpus, int RealtimePriority, bool LockMemory, double? MaxNoisePercent)
{
    public static ScenarioPlacement None { get; } = new(CpuSet.Empty, CpuSet.Empty, 0, false, null);

    /// <summary>The placement publisher <paramref name="index"/>'s thread applies to itself.</summary>
    public ThreadPlacement ForPublisher(int index) => new(PublisherCpus.IsEmpty ? null : CpuSet.Of([PublisherCpus.AtWrapped(index)]), RealtimePriority);

    /// <summary>The CPU list subscriber <paramref name="index"/>'s receiving threads are pinned to; empty when unpinned.</summary>
    public string SubscriberCpuList(int index) => SubscriberCpus.IsEmpty ? string.Empty : SubscriberCpus.AtWrapped(index).ToString(System.Globalization.CultureInfo.InvariantCulture);
}
