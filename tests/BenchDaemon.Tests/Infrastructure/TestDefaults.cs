using System.Runtime.CompilerServices;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Settings every daemon these tests start inherits (as a child process, its agents too) unless a test passes its own.</summary>
internal static class TestDefaults
{
    /// <summary>The command-line form of the code-settling limit (--IpcBench:CodeSettleTimeoutSeconds=N), which wins over the environment.</summary>
    public const string CodeSettleTimeout = "--IpcBench:CodeSettleTimeoutSeconds";

    /// <summary>What a test passes as its environment to run a daemon as it ships: tiered compilation on (the runtime's default).</summary>
    public static readonly IReadOnlyDictionary<string, string?> ShippedCodeGeneration = new Dictionary<string, string?> { ["DOTNET_TieredCompilation"] = null };

    /// <summary>
    /// The contracts tested here (delivery, counts, rates, reports) neither need dynamic PGO's speed nor should wait the
    /// seconds per scenario that code generation takes to settle (each agent is a fresh process). So daemons and agents
    /// run with tiered compilation off (every method fully optimized at its first call, nothing recompiled later) and
    /// their windows begin when the spec's warmup ends. Without the wait, tiered compilation would charge a short window
    /// with its recompilation (a 2 s grpc-uds window after 0.3 s spent 1 s of JIT time and missed its rate).
    /// CodeSettlingScenarioTests run the daemon as it ships, with <see cref="ShippedCodeGeneration"/>.
    /// </summary>
    [ModuleInitializer]
    internal static void Apply()
    {
        Environment.SetEnvironmentVariable("IpcBench__CodeSettleTimeoutSeconds", "0");
        Environment.SetEnvironmentVariable("DOTNET_TieredCompilation", "0");
    }
}
