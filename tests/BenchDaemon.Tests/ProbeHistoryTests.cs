using IpcBench.Daemon.Core;
using IpcBench.Daemon.Model;
using IpcBench.Daemon.Persistence;
using IpcBench.Reports;
using IpcBench.Daemon.Scenarios;
using IpcBench.Daemon.Tests.Infrastructure;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Tests;

/// <summary>The probe history survives a restart in the database, per machine, and what was learned reaches the reports.</summary>
[Collection(LightCollection.Name)]
public sealed class ProbeHistoryTests : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "ipcbench-tests", "probes-" + Guid.NewGuid().ToString("N")[..10]);

    public ProbeHistoryTests() => Directory.CreateDirectory(_directory);

    public void Dispose()
    {
        SqliteConnection.ClearAllPools();
        Directory.Delete(_directory, recursive: true);
    }

    [Fact]
    public async Task ADaemonRestarted_KnowsItsMachinesProbes_AndNoOtherMachines()
    {
        string path = Path.Combine(_directory, "scenarios.db");
        var first = History(path);
        foreach (double ns in Enumerable.Range(0, 15).SelectMany(i => new[] { 80.0 + i, 450.0 + 10 * i }))
        {
            first.Add("lab-01 | EPYC | 2 cores", "0<->1", ns, "s");
        }

        first.Add("lab-02 | Xeon | 64 cores", "0<->1", 30, "s");
        Assert.Equal("near ≤ 94 ns, far ≥ 450 ns, learned from 30 probes", first.Classes("lab-01 | EPYC | 2 cores").Describe());
        // The writes are off the scenario's path, each on its own task in no particular order: wait for all of them.
        var store = new ProbeStore(new ScenarioStore(path));
        for (int i = 0; i < 100 && (store.Latest("lab-01 | EPYC | 2 cores", 1000).Count < 30 || store.Latest("lab-02 | Xeon | 64 cores", 1000).Count < 1); i++)
        {
            await Task.Delay(50);
        }

        var restarted = History(path);

        Assert.Equal("near ≤ 94 ns, far ≥ 450 ns, learned from 30 probes", restarted.Classes("lab-01 | EPYC | 2 cores").Describe());
        Assert.Equal("placement classes not learned yet (1 of 20 probes)", restarted.Classes("lab-02 | Xeon | 64 cores").Describe());
    }

    [Fact]
    public void TheLearnedClasses_AreInTheComparisonsNotes_AndTheMarkdownReport()
    {
        var baseline = ReportSamples.Matrix("a", ReportSamples.ComparedRepetitions);
        var candidate = ReportSamples.Candidate(baseline) with
        {
            Environment = baseline.Environment with { PlacementClasses = "near ≤ 170 ns, far ≥ 400 ns, learned from 57 probes" },
        };

        var comparison = SuiteComparison.Compare(baseline, candidate, 5);

        Assert.Contains("placement classes the daemon learned: near ≤ 170 ns, far ≥ 400 ns, learned from 57 probes", comparison.Notes);
        Assert.DoesNotContain(comparison.Notes, n => n.StartsWith("environment differs", StringComparison.Ordinal));
        Assert.Contains("Placement classes by core-to-core probe: near ≤ 170 ns, far ≥ 400 ns, learned from 57 probes.", MarkdownReport.Render(candidate), StringComparison.Ordinal);
    }

    private static StoredProbeHistory History(string path)
    {
        var writer = new StoreWriter(Options.Create(new DaemonOptions { DatabasePath = path }), NullLogger<StoreWriter>.Instance);
        writer.Open(new ScenarioStore(path));
        return new StoredProbeHistory(writer, NullLogger<StoredProbeHistory>.Instance);
    }
}
