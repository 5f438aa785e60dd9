using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace IpcBench.Soak;

/// <summary>
/// What a full blocking collection of another .NET process leaves alive. <see cref="LiveBytes"/> is what survived
/// (every generation's promoted bytes), which only live objects move: not the GC's budgets, not fragmentation, not
/// mapped files or shared memory, which all move RSS. <see cref="HeapBytes"/> is the heap's size after that collection.
/// </summary>
public sealed record LiveHeap(long LiveBytes, long HeapBytes);

/// <summary>
/// Reads a process's <see cref="LiveHeap"/> from outside it, as dotnet-gcdump does: an EventPipe session over the
/// diagnostics IPC with the runtime provider's GC and GCHeapCollect keywords makes the runtime run a blocking gen2
/// collection as the session starts, and the GCHeapStats event after it carries each generation's sizes.
/// </summary>
public static class LiveHeapProbe
{
    private const string RuntimeProvider = "Microsoft-Windows-DotNETRuntime";

    /// <summary>The process's live heap, or null when it is gone, has no diagnostics IPC or did not answer in <paramref name="timeout"/>.</summary>
    public static async Task<LiveHeap?> MeasureAsync(int pid, TimeSpan timeout)
    {
        EventPipeSession session;
        try
        {
            var provider = new EventPipeProvider(RuntimeProvider, EventLevel.Informational,
                (long)(ClrTraceEventParser.Keywords.GC | ClrTraceEventParser.Keywords.GCHeapCollect));

            // No rundown: it would list every method of the process at the end, and only the collection matters.
            session = await new DiagnosticsClient(pid).StartEventPipeSessionAsync([provider], requestRundown: false, circularBufferMB: 16, CancellationToken.None)
                .WaitAsync(timeout);
        }
        catch (Exception e) when (e is ServerNotAvailableException or UnsupportedCommandException or IOException or TimeoutException or ArgumentException)
        {
            return null;
        }

        using (session)
        {
            var heap = new TaskCompletionSource<LiveHeap>(TaskCreationOptions.RunContinuationsAsynchronously);
            var source = new EventPipeEventSource(session.EventStream);
            int collection = -1;
            source.Clr.GCStart += e =>
            {
                // The first full blocking collection after the session started: the one it induced (or one the process
                // ran itself just then, which tells the same).
                if (collection < 0 && e.Depth == 2 && e.Type != GCType.BackgroundGC)
                {
                    collection = e.Count;
                }
            };
            source.Clr.GCHeapStats += e =>
            {
                if (collection >= 0)
                {
                    heap.TrySetResult(new LiveHeap(
                        e.TotalPromotedSize0 + e.TotalPromotedSize1 + e.TotalPromotedSize2 + e.TotalPromotedSize3 + e.TotalPromotedSize4,
                        e.GenerationSize0 + e.GenerationSize1 + e.GenerationSize2 + e.GenerationSize3 + e.GenerationSize4));
                }
            };

            // Processing returns only when the stream ends (StopProcessing does not interrupt its read): the answer is
            // taken as soon as it is there, and stopping the session ends the stream.
            var processing = Task.Run(source.Process);
            try
            {
                await Task.WhenAny(heap.Task, processing).WaitAsync(timeout);
            }
            catch (TimeoutException)
            {
            }
            finally
            {
                await StopAsync(session, processing);
                source.Dispose();
            }

            return heap.Task.IsCompletedSuccessfully ? heap.Task.Result : null;
        }
    }

    /// <summary>Ends the session, which ends the event stream and so the processing still reading it.</summary>
    private static async Task StopAsync(EventPipeSession session, Task processing)
    {
        try
        {
            await session.StopAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(5));
        }
        catch (Exception e) when (e is ServerNotAvailableException or IOException or TimeoutException or ObjectDisposedException)
        {
            // The process is gone or went deaf: nothing is left to stop.
        }

        try
        {
            await processing.WaitAsync(TimeSpan.FromSeconds(5));
        }
        catch (Exception e) when (e is TimeoutException or IOException or EndOfStreamException or ObjectDisposedException)
        {
        }
    }
}
