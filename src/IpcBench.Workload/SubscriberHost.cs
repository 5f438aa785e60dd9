using HdrHistogram;
using IpcBench.Transports;
using IpcBench.V1;
using IpcBench.Workload.Placement;

namespace IpcBench.Workload;

/// <summary>
/// Runs one subscriber: its transport endpoint and a dedicated thread per receiver. Used by agent processes and, for
/// in-process transports, by the daemon itself, so both measure the same way.
/// </summary>
public sealed class SubscriberHost : IDisposable
{
    private readonly ISubscriberEndpoint _endpoint;
    private readonly List<ReceiverWorker> _workers = [];
    private readonly List<IntervalHistogramReader> _intervalReaders = [];
    private readonly List<Thread> _threads = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly int _subscriberIndex;
    private readonly ThreadPlacement _placement;
    private int _running;
    private int _stopped;
    private Exception? _failure;

    private SubscriberHost(ISubscriberEndpoint endpoint, SubscriberPlan plan, int subscriberIndex, ThreadPlacement placement)
    {
        _endpoint = endpoint;
        _subscriberIndex = subscriberIndex;
        _placement = placement;
        foreach (var receiver in endpoint.Receivers)
        {
            var worker = new ReceiverWorker(receiver, plan);
            _workers.Add(worker);
            _intervalReaders.Add(new IntervalHistogramReader(worker.Latency));
        }
    }

    /// <summary>Completes when every receiver has ended; faults if one failed.</summary>
    public Task Completion => _completion.Task;

    public bool SawEveryEndOfStream => _workers.All(w => w.SawEveryEndOfStream);

    /// <summary>
    /// The one way a subscriber is built from the daemon's resolved set-up, in an agent (with
    /// <see cref="SubscriberSetups.CreateTransport"/>) and in the daemon (with its own instance of the transport) alike.
    /// </summary>
    public static SubscriberHost Connect(ITransport transport, SubscriberSetup setup, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(transport);
        ArgumentNullException.ThrowIfNull(setup);
        if (!string.Equals(transport.Id, setup.Transport, StringComparison.Ordinal))
        {
            throw new ArgumentException($"the set-up is for transport '{setup.Transport}', not '{transport.Id}'", nameof(setup));
        }

        return Connect(transport, setup.ToOptions(), setup.ToPlan(), cancellationToken, setup.ToPlacement());
    }

    /// <param name="placement">Applied by every receiving thread to itself before its first message; null: unpinned.</param>
    public static SubscriberHost Connect(ITransport transport, SubscriberOptions options, SubscriberPlan plan, CancellationToken cancellationToken,
        ThreadPlacement? placement = null)
    {
        var endpoint = transport.CreateSubscriber(options, cancellationToken);
        return new SubscriberHost(endpoint, plan, options.SubscriberIndex, placement ?? ThreadPlacement.None);
    }

    public void Start()
    {
        _running = _workers.Count;
        for (int i = 0; i < _workers.Count; i++)
        {
            var worker = _workers[i];
            var name = $"sub{_subscriberIndex}-rx{i}";
            var thread = new Thread(() => RunWorker(worker, name))
            {
                IsBackground = true,
                Name = name,
            };
            _threads.Add(thread);
            thread.Start();
        }

        if (_workers.Count == 0)
        {
            _completion.TrySetResult();
        }
    }

    private void RunWorker(ReceiverWorker worker, string name)
    {
        try
        {
            // A placement the kernel refuses fails the subscriber, and with it the scenario, with the kernel's reason.
            _placement.ApplyToCurrentThread($"subscriber {_subscriberIndex} thread {name}");
            worker.Run(_stop.Token);
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _failure, e, null);
        }
        finally
        {
            if (Interlocked.Decrement(ref _running) == 0)
            {
                if (_failure is { } failure)
                {
                    _completion.TrySetException(failure);
                }
                else
                {
                    _completion.TrySetResult();
                }
            }
        }
    }

    public ReceiverCounters Counters => _workers.Aggregate(default(ReceiverCounters), (sum, w) => sum + w.Counters);

    /// <summary>Per publisher: the sequence number each receiver expects next (the highest known count sent).</summary>
    public long[] NextSequenceByPublisher(int totalPublishers)
    {
        var next = new long[totalPublishers];
        foreach (var worker in _workers)
        {
            for (int p = 0; p < totalPublishers; p++)
            {
                next[p] = Math.Max(next[p], worker.NextSequence(p));
            }
        }

        return next;
    }

    /// <summary>Adds the latency recorded since the previous call to <paramref name="into"/>. Call from one reporting thread.</summary>
    public void ReadLatencyInterval(HistogramBase into)
    {
        foreach (var reader in _intervalReaders)
        {
            reader.ReadInterval(into);
        }
    }

    /// <summary>Ends the receivers now (closing the links wakes receivers blocked in the kernel).</summary>
    public void Stop()
    {
        if (Interlocked.Exchange(ref _stopped, 1) == 1)
        {
            return;
        }

        _stop.Cancel();
        _endpoint.Dispose();
    }

    public void Dispose()
    {
        Stop();
        foreach (var thread in _threads)
        {
            thread.Join(TimeSpan.FromSeconds(5));
        }

        _stop.Dispose();
    }
}
