using HdrHistogram;
using IpcBench.Transports;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>Drives publishers and subscribers of one transport on threads of the test process.</summary>
internal static class InProcessLoop
{
    /// <param name="SenderLag">Every publisher's <see cref="PublisherWorker.SenderLag"/>, added up.</param>
    public sealed record Outcome(long Sent, ReceiverCounters Received, LongHistogram Latency, long BadEchoes, LongHistogram SenderLag);

    public static Outcome Run(
        ITransport transport,
        int publishers,
        int subscribers,
        int payloadBytes,
        long messagesPerPublisher,
        bool full = true,
        bool roundTrip = false,
        WaitMode waitMode = WaitMode.Block,
        bool paired = false,
        Func<IPublisherEndpoint, IPublisherEndpoint>? wrapPublisher = null,
        double ratePerPublisher = 0,
        MeasurementWindow? window = null)
    {
        var runtimeDirectory = Directory.CreateTempSubdirectory("ipcbench-test-").FullName;
        var environment = new TransportEnvironment(runtimeDirectory, Environment.ProcessId);
        var key = Guid.NewGuid().ToString("N")[..8];
        int maxMessage = MessageHeader.Size + payloadBytes;
        if (window is null)
        {
            window = new MeasurementWindow();
            window.Start(0);
        }

        var endpoints = new List<IPublisherEndpoint>();
        var hosts = new List<SubscriberHost>();
        try
        {
            for (int p = 0; p < publishers; p++)
            {
                endpoints.Add(transport.CreatePublisher(new PublisherOptions(
                    environment, key, p, paired ? 1 : subscribers, publishers, subscribers, maxMessage, waitMode, roundTrip)));
            }

            using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            var accepting = endpoints.Select(e => Task.Run(() => e.WaitForSubscribers(paired ? 1 : subscribers, TimeSpan.FromSeconds(20), cancel.Token))).ToList();
            for (int s = 0; s < subscribers; s++)
            {
                var addresses = paired
                    ? [new PublisherAddress(s, endpoints[s].Address)]
                    : endpoints.Select((e, i) => new PublisherAddress(i, e.Address)).ToList();
                var options = new SubscriberOptions(environment, key, s, addresses, publishers, subscribers, maxMessage, waitMode, roundTrip);
                var host = SubscriberHost.Connect(transport, options, new SubscriberPlan(payloadBytes, full, roundTrip, publishers), cancel.Token);
                hosts.Add(host);
            }

            Task.WaitAll(accepting);
            hosts.ForEach(h => h.Start());
            var workers = endpoints.Select((e, i) => new PublisherWorker(
                wrapPublisher is null ? e : wrapPublisher(e), new PublisherPlan(i, payloadBytes, full, ratePerPublisher, roundTrip, paired ? 1 : subscribers, waitMode, messagesPerPublisher), window)).ToList();
            var threads = workers.Select(w => new Thread(() => w.Run(cancel.Token))).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            Task.WaitAll([.. hosts.Select(h => h.Completion)], cancel.Token);

            var latency = LatencyHistograms.Create();
            var senderLag = LatencyHistograms.Create();
            foreach (var worker in workers)
            {
                latency.Add(worker.RoundTripLatency);
                senderLag.Add(worker.SenderLag);
            }

            foreach (var host in hosts)
            {
                host.ReadLatencyInterval(latency);
            }

            return new Outcome(
                workers.Sum(w => w.Sent),
                hosts.Aggregate(default(ReceiverCounters), (sum, h) => sum + h.Counters),
                latency,
                workers.Sum(w => w.BadEchoes),
                senderLag);
        }
        finally
        {
            hosts.ForEach(h => h.Dispose());
            endpoints.ForEach(e => e.Dispose());
            Directory.Delete(runtimeDirectory, recursive: true);
        }
    }
}
