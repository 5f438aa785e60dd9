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
        var lanes = new[] { DaemonCollection.Name, LightCollection.Name, WaitCollection.Name };
        var testClasses = typeof(TestLaneTests).Assembly.GetTypes()
            .Where(t => t.GetMethods().Any(m => m.GetCustomAttributes<FactAttribute>(inherit: true).Any()))
            .ToList();
        Assert.True(testClasses.Count > 50, $"only {testClasses.Count} test classes found");
        var outside = testClasses
            .Where(t => !lanes.Contains(CollectionName(t)))
            .Select(t => t.Name)
            .Order(StringComparer.Ordinal)
            .ToList();
        Assert.True(outside.Count == 0, $"in no lane: {string.Join(", ", outside)}");
    }

    [Fact]
    public void TheAssembly_RunsAtMostThreeCollectionsAtOnce()
    {
        var behavior = typeof(TestLaneTests).Assembly.GetCustomAttribute<CollectionBehaviorAttribute>();
        Assert.NotNull(behavior);
        Assert.Equal(3, behavior.MaxParallelThreads);
        Assert.False(behavior.DisableTestParallelization, "with parallelization off the lanes run one after the other");
    }

    // xunit 2 keeps a collection's name only as its attribute's constructor argument.
    private static string? CollectionName(Type testClass) => testClass.GetCustomAttributesData()
        .FirstOrDefault(a => a.AttributeType == typeof(CollectionAttribute))?.ConstructorArguments.FirstOrDefault().Value as string;
}
