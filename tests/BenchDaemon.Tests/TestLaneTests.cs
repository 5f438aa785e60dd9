using System.Reflection;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The assembly runs three lanes side by side (AssemblyInfo.cs): a test class in none of them would be a lane of its own,
/// running beside tests that spin and measure.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class TestLaneTests
{
    [Fact]
    public void EveryTestClass_IsInTheDaemonLightOrWaitLane()
    {
        var outside = TestLanes.ClassesOutside(typeof(TestLaneTests).Assembly, [DaemonCollection.Name, LightCollection.Name, WaitCollection.Name], atLeast: 50);
        Assert.True(outside.Count == 0, $"in no lane: {string.Join(", ", outside)}");
    }

    [Fact]
    public void TheAssembly_RunsAtMostThreeCollectionsAtOnce()
    {
        var behavior = typeof(TestLaneTests).Assembly.GetCustomAttribute<CollectionBehaviorAttribute>();
        Assert.NotNull(behavior);
        Assert.Equal(3, TestLanes.MaxParallelThreads(typeof(TestLaneTests).Assembly));
        Assert.False(behavior.DisableTestParallelization, "with parallelization off the lanes run one after the other");
    }
}
