using HdrHistogram;
using IpcBench.Daemon.Core;
using IpcBench.Workload;

namespace IpcBench.Daemon.Subscribers;

/// <summary>A subscriber on threads of the daemon, for transports that cannot cross processes.</summary>
public sealed class LocalSubscriber(int index, SubscriberHost host) : SubscriberHandle(index)
{
    public override string Name => $"in-process subscriber {Index}";

    public override Task Ready => Task.CompletedTask;

    public override ReceiverCounters Counters => host.Counters;

    public SubscriberHost Host => host;

    public override void StartWarmup() => ObserveReceived(host.Counters.Received, MonotonicClock.NowNs());

    public override void StartMeasurement(long fromNs)
    {
    }

    public override void DrainLatencyInto(HistogramBase into) => host.ReadLatencyInterval(into);

    public override double ReceiveRate
    {
        get
        {
            ObserveReceived(host.Counters.Received, MonotonicClock.NowNs());
            return base.ReceiveRate;
        }
    }

    public override async Task FinishAsync(TimeSpan drainTimeout, CancellationToken cancellationToken)
    {
        await Task.WhenAny(host.Completion, Task.Delay(drainTimeout, cancellationToken)).ConfigureAwait(false);
        host.Stop();
        if (host.Completion.IsFaulted)
        {
            throw new ScenarioFailureException($"{Name} failed: {host.Completion.Exception!.GetBaseException().Message}");
        }
    }

    public override ValueTask DisposeAsync()
    {
        host.Dispose();
        return ValueTask.CompletedTask;
    }
}
