using System.Globalization;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Several cases (one per transport, usually) run at once in one test, so their waits overlap instead of adding up. Each
/// case runs to its end whatever the others did, and a failure lists every broken case by name: merging per-case tests
/// this way keeps each case's verdict.
/// </summary>
internal sealed class Cases
{
    private readonly List<string> _failures = [];

    /// <summary>Runs <paramref name="run"/> for every case at once and returns each one's result; throws naming every case that threw.</summary>
    public static async Task<Dictionary<string, T>> AllAsync<T>(IEnumerable<string> names, Func<string, Task<T>> run)
    {
        var tasks = names.ToDictionary(name => name, name => Task.Run(() => run(name)));
        try
        {
            await Task.WhenAll(tasks.Values);
        }
        catch
        {
            // Every case's exception, not only the first one WhenAll rethrows.
        }

        var failed = tasks.Where(t => !t.Value.IsCompletedSuccessfully).ToList();
        if (failed.Count > 0)
        {
            throw new Xunit.Sdk.XunitException($"{failed.Count} of {tasks.Count} case(s) failed:\n"
                + string.Join("\n", failed.Select(t => $"[{t.Key}] {t.Value.Exception?.GetBaseException().Message ?? "canceled"}")));
        }

        return tasks.ToDictionary(t => t.Key, t => t.Value.Result);
    }

    /// <summary>As <see cref="AllAsync{T}"/>, for checks without a result.</summary>
    public static Task AllAsync(IEnumerable<string> names, Func<string, Task> run) =>
        AllAsync(names, async name =>
        {
            await run(name);
            return true;
        });

    /// <summary>
    /// Starts one scenario per case at once and waits for each one's result. The wait is RunScenarioAsync's (30 s
    /// beyond the scenario's own time) plus 30 s: all the cases' agents start together, on a machine with two cores.
    /// </summary>
    public static Task<Dictionary<string, IpcBench.V1.Scenario>> RunAsync(DaemonClient daemon, IReadOnlyDictionary<string, IpcBench.V1.ScenarioSpec> specs) =>
        AllAsync(specs.Keys, name => daemon.RunScenarioAsync(specs[name], TimeSpan.FromSeconds(60)
            + (specs[name].Duration?.ToTimeSpan() ?? TimeSpan.Zero) + (specs[name].Warmup?.ToTimeSpan() ?? TimeSpan.Zero)));

    /// <summary>Runs a check of case <paramref name="name"/> now, remembering its failure for <see cref="Verify"/> rather than throwing.</summary>
    public Cases Check(string name, Action check)
    {
        try
        {
            check();
        }
        catch (Exception e)
        {
            _failures.Add($"[{name}] {e.Message}");
        }

        return this;
    }

    /// <summary>Fails with every case's failure, each under its name.</summary>
    public void Verify()
    {
        if (_failures.Count > 0)
        {
            throw new Xunit.Sdk.XunitException(string.Create(CultureInfo.InvariantCulture, $"{_failures.Count} case check(s) failed:\n") + string.Join("\n", _failures));
        }
    }
}

internal static class DaemonAgents
{
    /// <summary>Live agents of one scenario (the daemon passes "--scenario ID" to each), oldest first.</summary>
    public static IReadOnlyList<ProcessEntry> AgentsOf(this DaemonProcess daemon, string scenarioId) =>
        [.. daemon.Agents().Where(a => a.CommandLine.Contains($"--scenario {scenarioId} ", StringComparison.Ordinal)).OrderBy(a => a.StartTicks).ThenBy(a => a.Pid)];
}
