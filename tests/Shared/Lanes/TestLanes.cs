using System.Reflection;

namespace IpcBench.Tests.Shared;

/// <summary>
/// The lane check both test assemblies that run lanes side by side make: every test class names one of the lanes'
/// collections, or it would be a lane of its own, beside tests that spin and measure.
/// </summary>
internal static class TestLanes
{
    /// <summary>The test classes of <paramref name="assembly"/> in none of <paramref name="lanes"/>, by name.</summary>
    public static IReadOnlyList<string> ClassesOutside(Assembly assembly, IReadOnlyCollection<string> lanes, int atLeast)
    {
        var testClasses = assembly.GetTypes()
            .Where(t => t.GetMethods().Any(m => m.GetCustomAttributes<FactAttribute>(inherit: true).Any()))
            .ToList();
        Assert.True(testClasses.Count >= atLeast, $"only {testClasses.Count} test classes found");
        return [.. testClasses.Where(t => !lanes.Contains(CollectionName(t))).Select(t => t.Name).Order(StringComparer.Ordinal)];
    }

    /// <summary>How many collections the assembly runs at once (its CollectionBehavior), null without one.</summary>
    public static int? MaxParallelThreads(Assembly assembly) => assembly.GetCustomAttribute<CollectionBehaviorAttribute>()?.MaxParallelThreads;

    // xunit 2 keeps a collection's name only as its attribute's constructor argument.
    private static string? CollectionName(Type testClass) => testClass.GetCustomAttributesData()
        .FirstOrDefault(a => a.AttributeType == typeof(CollectionAttribute))?.ConstructorArguments.FirstOrDefault().Value as string;
}
