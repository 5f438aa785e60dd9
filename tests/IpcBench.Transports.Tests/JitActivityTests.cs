using System.Reflection.Emit;
using IpcBench.Workload;

namespace IpcBench.Transports.Tests;

/// <summary>The reading a result's jit_compiled_methods and jit_time come from: it must see a method compiled between two readings.</summary>
[Collection(nameof(SerialMeasurements))]
public sealed class JitActivityTests
{
    [Fact]
    public void AMethodCompiledBetweenTwoReadings_IsCounted_WithItsTime()
    {
        var before = JitActivity.Take();
        Assert.Equal(42, CompileNewMethod()(41));
        var since = JitActivity.Take().Since(before);

        Assert.True(since.Methods >= 1, $"methods compiled between the readings: {since.Methods}, expected the new one at least");
        Assert.True(since.Time > TimeSpan.Zero, $"compilation time between the readings: {since.Time}");
    }

    [Fact]
    public void Since_IsTheDifference() =>
        Assert.Equal(new JitActivity(3, TimeSpan.FromMilliseconds(2)),
            new JitActivity(10, TimeSpan.FromMilliseconds(5)).Since(new JitActivity(7, TimeSpan.FromMilliseconds(3))));

    /// <summary>A method no one has compiled yet: a dynamic method is compiled by the JIT on its first call.</summary>
    private static Func<int, int> CompileNewMethod()
    {
        var method = new DynamicMethod("AddOne" + Guid.NewGuid().ToString("N"), typeof(int), [typeof(int)]);
        var il = method.GetILGenerator();
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ldc_I4_1);
        il.Emit(OpCodes.Add);
        il.Emit(OpCodes.Ret);
        return method.CreateDelegate<Func<int, int>>();
    }
}
