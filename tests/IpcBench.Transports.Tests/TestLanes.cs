// Two lanes side by side, one test at a time in each (LaneTests keeps every test class in one of them).
[assembly: CollectionBehavior(MaxParallelThreads = 2)]

namespace IpcBench.Transports.Tests;

/// <summary>
/// Tests that spin, pin, race threads or time what they see: on 2 cores two of them at once would starve each other, so
/// this lane runs them one at a time, beside <see cref="LightRuns"/> only.
/// </summary>
[CollectionDefinition(nameof(SerialMeasurements))]
public sealed class SerialMeasurements;

/// <summary>
/// Tests that neither spin nor time anything: unit tests, and runs whose threads sleep in the kernel between messages
/// and which count (bytes allocated, messages delivered) rather than time. Beside a spinning test they are slower, not
/// wrong; before this lane, the blocking allocation runs left a core idle for half of this assembly's run.
/// </summary>
[CollectionDefinition(nameof(LightRuns))]
public sealed class LightRuns;

[Collection(nameof(LightRuns))]
public sealed class LaneTests
{
    /// <summary>A test class in neither lane would be a third, running beside a spinning test and whatever else is light.</summary>
    [Fact]
    public void EveryTestClass_IsInOneOfTheTwoLanes_AndTheyRunSideBySide()
    {
        var outside = TestLanes.ClassesOutside(typeof(LaneTests).Assembly, [nameof(SerialMeasurements), nameof(LightRuns)], atLeast: 15);
        Assert.True(outside.Count == 0, $"in no lane: {string.Join(", ", outside)}");
        Assert.Equal(2, TestLanes.MaxParallelThreads(typeof(LaneTests).Assembly));
    }
}
