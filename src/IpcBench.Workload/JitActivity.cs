using System.Runtime;

namespace IpcBench.Workload;

/// <summary>
/// What the JIT has compiled in this process so far (every thread), from <see cref="JitInfo"/>. Two readings around a
/// measured window tell whether code generation (a method's first compilation, or a tier-up) ran inside it: on two
/// cores a background recompilation takes its time from a hot loop.
/// </summary>
public readonly record struct JitActivity(long Methods, TimeSpan Time)
{
    public static JitActivity Take() => new(JitInfo.GetCompiledMethodCount(), JitInfo.GetCompilationTime());

    /// <summary>What was compiled between <paramref name="from"/> and this reading.</summary>
    public JitActivity Since(JitActivity from) => new(Methods - from.Methods, Time - from.Time);
}
