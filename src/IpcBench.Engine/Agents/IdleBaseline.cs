namespace IpcBench.Daemon.Agents;

/// <summary>
/// What an agent may hold idle, learned from the scenarios it served, and whether a new idle reading stays within it.
/// A transport's first scenario in the agent may raise the baseline (zeromq's context: its threads and sockets, kept
/// for the process's life); any later one must leave nothing, so a per-scenario leak shows the second time. The live
/// heap may also rise after a payload larger than the transport served before: shared array pools keep what it
/// rented (8.3 MiB more after a grpc-uds 512 KB scenario than after an 8 B one, 2026-11-29), sized by the payload, and a
/// leak shows at the next scenario of a size served.
/// </summary>
internal sealed class IdleBaseline
{
    private readonly Dictionary<string, int> _largestPayload = new(StringComparer.Ordinal);
    private IdleReading? _most;

    /// <summary>Why <paramref name="reading"/>, taken after a scenario of <paramref name="transport"/> at <paramref name="payloadBytes"/>, shows something left behind; null when it does not.</summary>
    public string? LeftOver(IdleReading reading, string transport, int payloadBytes) =>
        _most is { } most && _largestPayload.TryGetValue(transport, out int largest)
            ? reading.LeftOver(most, compareHeap: payloadBytes <= largest)
            : null;

    /// <summary>Takes in a reading that passed <see cref="LeftOver"/>: what the first scenario of a transport or a larger payload left may stay.</summary>
    public void Accept(IdleReading reading, string transport, int payloadBytes)
    {
        bool firstOfTransport = !_largestPayload.TryGetValue(transport, out int largest);
        if (_most is not { } most)
        {
            _most = reading;
        }
        else if (firstOfTransport)
        {
            _most = IdleReading.Max(most, reading);
        }
        else if (payloadBytes > largest)
        {
            _most = most with { LiveHeapBytes = Math.Max(most.LiveHeapBytes, reading.LiveHeapBytes) };
        }

        _largestPayload[transport] = Math.Max(largest, payloadBytes);
    }
}
