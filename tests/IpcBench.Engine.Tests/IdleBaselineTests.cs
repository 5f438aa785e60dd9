using IpcBench.Daemon.Agents;

namespace IpcBench.Daemon.Tests;

/// <summary>What a warm agent may hold between scenarios: the first of a transport sets it, later ones must leave nothing.</summary>
public sealed class IdleBaselineTests
{
    private const long MiB = 1 << 20;

    private static IdleReading Idle(int descriptors = 20, int mappings = 0, int receiving = 0, long heapMiB = 2) =>
        new(descriptors, mappings, receiving, heapMiB * MiB);

    [Fact]
    public void ATransportsFirstScenario_MayLeaveWhatItKeepsForLife_ItsSecondMayNot()
    {
        var baseline = new IdleBaseline();
        Assert.Null(baseline.LeftOver(Idle(), "uds", 8));
        baseline.Accept(Idle(), "uds", 8);

        // zeromq's first scenario: its context's threads and sockets stay.
        Assert.Null(baseline.LeftOver(Idle(descriptors: 24), "zeromq", 8));
        baseline.Accept(Idle(descriptors: 24), "zeromq", 8);
        Assert.Null(baseline.LeftOver(Idle(descriptors: 24), "zeromq", 8));
        Assert.Null(baseline.LeftOver(Idle(descriptors: 24), "uds", 8));

        Assert.Equal("25 open descriptors against 24 after its earlier scenarios", baseline.LeftOver(Idle(descriptors: 25), "zeromq", 8));
        Assert.Equal("1 shared mappings against 0 after its earlier scenarios", baseline.LeftOver(Idle(descriptors: 24, mappings: 1), "uds", 8));
        Assert.Equal("1 receiving thread(s) still running", baseline.LeftOver(Idle(descriptors: 24, receiving: 1), "uds", 8));
    }

    [Fact]
    public void TheLiveHeap_MayGrowByTheSlack_OrAfterALargerPayloadOfTheSameTransport()
    {
        var baseline = new IdleBaseline();
        baseline.Accept(Idle(heapMiB: 2), "grpc-uds", 8);
        Assert.Null(baseline.LeftOver(Idle(heapMiB: 6), "grpc-uds", 1024));
        Assert.NotNull(baseline.LeftOver(Idle(heapMiB: 7), "grpc-uds", 8));

        // A larger payload: its pooled buffers raise the heap's baseline, nothing else.
        Assert.Null(baseline.LeftOver(Idle(heapMiB: 10), "grpc-uds", 524288));
        Assert.NotNull(baseline.LeftOver(Idle(descriptors: 21, heapMiB: 10), "grpc-uds", 524288));
        baseline.Accept(Idle(heapMiB: 10), "grpc-uds", 524288);
        Assert.Null(baseline.LeftOver(Idle(heapMiB: 14), "grpc-uds", 524288));

        // The same size again, or a smaller one: a leak of every scenario shows.
        Assert.Equal("a live heap of 15.0 MiB against 10.0 MiB after its earlier scenarios", baseline.LeftOver(Idle(heapMiB: 15), "grpc-uds", 524288));
        Assert.NotNull(baseline.LeftOver(Idle(heapMiB: 15), "grpc-uds", 8));

        // Another transport's largest payload is not this one's: uds served only 8 B.
        baseline.Accept(Idle(heapMiB: 10), "uds", 8);
        Assert.NotNull(baseline.LeftOver(Idle(heapMiB: 15), "uds", 8));
        Assert.Null(baseline.LeftOver(Idle(heapMiB: 15), "uds", 65536));
    }
}
