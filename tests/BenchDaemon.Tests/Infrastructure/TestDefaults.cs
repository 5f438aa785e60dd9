using System.Runtime.CompilerServices;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>Settings every daemon these tests start inherits (as a child process, its agents too) unless a test passes its own.</summary>
internal static class TestDefaults
{
    /// <summary>The command-line form of the code-settling limit (--IpcBench:CodeSettleTimeoutSeconds=N), which wins over the environment.</summary>
    public const string CodeSettleTimeout = "--IpcBench:CodeSettleTimeoutSeconds";

    /// <summary>What a test passes as its environment to run a daemon as it ships: tiered compilation with dynamic PGO (the runtime's default).</summary>
    public static readonly IReadOnlyDictionary<string, string?> ShippedCodeGeneration = new Dictionary<string, string?>
    {
        ["DOTNET_TieredPGO"] = null,
        ["DOTNET_TC_CallCountingDelayMs"] = null,
        ["DOTNET_TC_CallCounting"] = null,
    };

    /// <summary>
    /// For the shared daemons (<see cref="SharedDaemon"/>, <see cref="ConcurrentDaemon"/>), whose tests hold delivered rates
    /// to bounds (2,000 msg/s ± 5 % over a 2 s window): tiered compilation off, every method compiled once at its first
    /// call, so no window shares the machine with recompilation. With tiering on, a grpc-uds window beside six other
    /// transports' stalled 0.3 s and delivered 1,875 msg/s (fresh-clone CI run, 2026-11-28). Their agents inherit it.
    /// </summary>
    public static readonly IReadOnlyDictionary<string, string?> CodeFinalAtFirstCall = new Dictionary<string, string?> { ["DOTNET_TieredCompilation"] = "0" };

    /// <summary>
    /// The contracts tested here (delivery, counts, rates, reports) neither need dynamic PGO's speed nor should wait the
    /// seconds per scenario that code generation takes to settle (each agent is a fresh process). So daemons and agents
    /// run tiered compilation without PGO's instrumented tier, and their windows begin when the spec's warmup ends.
    /// Without PGO a method leaves its quick first code after 30 calls, and a loop by on-stack replacement, in well under
    /// the warmups these tests use; with PGO, a 2 s grpc-uds window after 0.3 s spent 1 s of JIT time and missed its
    /// rate. Not tiered compilation off everywhere: compiling every method fully at its first call cost 2 s per daemon
    /// start (3.2 s against 1.2 s to answer health) and 0.5 s more for a first 0.5 s uds scenario (2.0 s against 1.5 s). Tests holding a rate to a bound run with
    /// <see cref="CodeFinalAtFirstCall"/>; CodeSettlingScenarioTests run the daemon as it ships, with
    /// <see cref="ShippedCodeGeneration"/>.
    /// </summary>
    /// <remarks>
    /// Every scenario also starts fresh agents (IpcBench:WarmAgentIdleSeconds=0): these tests count, kill, stop and look
    /// for the agents of the scenario they run, and a warm agent of an earlier test would be among them. WarmAgentTests
    /// run the daemon as it ships in that respect, and so do the shared daemons whose tests never look for agents
    /// (<see cref="SharedDaemon"/>, <see cref="WarmConcurrentDaemon"/>).
    /// Call counting waits the runtime's default 100 ms (the daemon ships with 0, for its first scenarios' settling): with
    /// 0 a test daemon spent 2.3 s of CPU by a second after it answered health, against 1.1 s, and these tests start
    /// about a hundred daemons on a CPU-bound machine.
    /// And no call counting at all (DOTNET_TC_CallCounting=0): jitted methods keep their quick first code, loops still
    /// reach optimized code by on-stack replacement, precompiled framework code stays as it is. A daemon running paced
    /// scenarios one after another recompiled ~500 methods at tier 1 per scenario (5,120 over ten, after its first) and
    /// took 0.59 CPU-s a scenario against 0.38 without (three interleaved runs of ten 200 ms 1:2 uds scenarios); over
    /// BenchDaemon.Tests (bench/test-cpu.sh, 2026-11-30, one run against two) 885 CPU-s in 475 s against 796 in 437 and
    /// 875 in 468: the daemons 404 against 375 and 396 CPU-s, the agents 300 against 249 and 266 (most daemons here run a
    /// scenario or two, and the machine's CPU-s for the same work move by a tenth).
    /// </remarks>
    [ModuleInitializer]
    internal static void Apply()
    {
        Environment.SetEnvironmentVariable("DOTNET_TC_CallCountingDelayMs", "100");
        Environment.SetEnvironmentVariable("IpcBench__WarmAgentIdleSeconds", "0");
        Environment.SetEnvironmentVariable("IpcBench__CodeSettleTimeoutSeconds", "0");
        Environment.SetEnvironmentVariable("DOTNET_TieredPGO", "0");
        Environment.SetEnvironmentVariable("DOTNET_TC_CallCounting", "0");
    }
}
