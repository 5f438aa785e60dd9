using System.Globalization;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Scenarios;

/// <summary>
/// Decides whether one more scenario may start next to the running ones: concurrent scenarios, agent processes and
/// shared memory. A refusal is RESOURCE_EXHAUSTED with the numbers that led to it and the option that sets the limit.
/// </summary>
public sealed class AdmissionControl(IOptions<DaemonOptions> options, RuntimeDirectory runtime)
{
    /// <summary>Free bytes of a file system; replaceable so tests can play a nearly full /dev/shm.</summary>
    public Func<string, long?> FreeBytesOf { get; init; } = FreeBytes;

    /// <summary>What a new scenario would hold: checked here, remembered on the run while it runs.</summary>
    public Claim ClaimFor(ResolvedSpec spec, string scenarioKey) =>
        new(spec.AgentProcesses, spec.SharedMemoryBytes(runtime.TransportEnvironment, scenarioKey));

    /// <summary>Throws RESOURCE_EXHAUSTED when <paramref name="claim"/> does not fit beside <paramref name="running"/>.</summary>
    public void Admit(Claim claim, IReadOnlyCollection<Claim> running)
    {
        var limits = options.Value;
        if (running.Count >= limits.MaxConcurrentScenarios)
        {
            throw Exhausted($"{running.Count} scenarios are running; at most {limits.MaxConcurrentScenarios} may run at once (IpcBench:MaxConcurrentScenarios)");
        }

        int agents = running.Sum(c => c.AgentProcesses);
        if (claim.AgentProcesses > 0 && agents + claim.AgentProcesses > limits.MaxAgents)
        {
            throw Exhausted($"this scenario needs {claim.AgentProcesses} agent processes and running scenarios hold {agents}; " +
                $"at most {limits.MaxAgents} may run at once (IpcBench:MaxAgents)");
        }

        if (claim.SharedMemoryBytes == 0)
        {
            return;
        }

        long reserved = running.Sum(c => c.SharedMemoryBytes);
        if (limits.SharedMemoryBudgetBytes > 0 && reserved + claim.SharedMemoryBytes > limits.SharedMemoryBudgetBytes)
        {
            throw Exhausted($"this scenario needs {Mib(claim.SharedMemoryBytes)} of shared memory and running scenarios hold {Mib(reserved)}; " +
                $"the budget is {Mib(limits.SharedMemoryBudgetBytes)} (IpcBench:SharedMemoryBudgetBytes)");
        }

        // Running scenarios' files are sparse and fill as they run, so their whole claims count against what is free now.
        if (FreeBytesOf(limits.SharedMemoryDirectory) is { } free && claim.SharedMemoryBytes > free - reserved)
        {
            throw Exhausted($"this scenario needs {Mib(claim.SharedMemoryBytes)} of shared memory but {limits.SharedMemoryDirectory} has {Mib(free)} free" +
                (reserved > 0 ? $", of which running scenarios may still fill {Mib(reserved)}" : string.Empty) +
                "; use smaller payloads or fewer publishers/subscribers, or enlarge it (IpcBench:SharedMemoryDirectory)");
        }
    }

    private static RequestRefusedException Exhausted(string message) => new(RefusalKind.ResourceExhausted, field: null, message);

    private static string Mib(long bytes) => string.Create(CultureInfo.InvariantCulture, $"{bytes / (1024.0 * 1024.0):0.0} MiB ({bytes} B)");

    private static long? FreeBytes(string directory)
    {
        try
        {
            return Directory.Exists(directory) ? new DriveInfo(directory).AvailableFreeSpace : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            // Nothing to compare with; the transport reports what it runs into.
            return null;
        }
    }

    /// <param name="AgentProcesses">Agent processes the scenario starts.</param>
    /// <param name="SharedMemoryBytes">Shared memory its publishers map, by the transport's estimate.</param>
    public readonly record struct Claim(int AgentProcesses, long SharedMemoryBytes);
}
