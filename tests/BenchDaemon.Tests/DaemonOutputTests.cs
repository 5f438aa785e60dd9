using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The daemon's output directory as built (and as published: the Dockerfile checks the same): built for this machine's
/// RID, so its native libraries sit beside the daemon, and precompiled (ReadyToRun) except for the measured code, which
/// must reach the JIT as IL (BenchDaemon.csproj says why).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class DaemonOutputTests
{
    /// <summary>What every daemon, CLI verb and agent loads at start-up and no message passes through.</summary>
    public static readonly TheoryData<string> StartUp = new()
    {
        "BenchDaemon.dll", "BenchAgent.dll", "IpcBench.Engine.dll", "IpcBench.Reports.dll", "IpcBench.Store.dll",
        "Serilog.dll", "OpenTelemetry.dll", "Prometheus.NetStandard.dll", "System.CommandLine.dll",
    };

    [Fact]
    public void CarriesTheNativeSqliteForThisMachine()
    {
        // Without it the daemon runs with no scenario database.
        var library = Path.Combine(RepoLayout.DaemonDirectory, "libe_sqlite3.so");
        Assert.True(File.Exists(library), $"{library} is missing");
    }

    /// <summary>
    /// The hot loops' assemblies and every assembly of the output they reference, directly or not (gRPC and Protobuf for
    /// grpc-uds, NetMQ for zeromq, HdrHistogram for the latencies): a message passes only through IL.
    /// </summary>
    [Fact]
    public void MeasuredCode_AndAllItCalls_StaysIL()
    {
        var measured = Closure("IpcBench.Transports", "IpcBench.Workload");
        Assert.Contains("NetMQ", measured);
        Assert.Contains("Grpc.Net.Client", measured);
        Assert.Contains("HdrHistogram", measured);
        var precompiled = measured.Where(name => IsReadyToRun(name + ".dll")).ToList();
        Assert.True(precompiled.Count == 0, $"precompiled, though the measured code calls them: {string.Join(", ", precompiled)}");
    }

    [Theory]
    [MemberData(nameof(StartUp))]
    public void StartUpAssemblies_ArePrecompiled(string assembly) => Assert.True(IsReadyToRun(assembly), $"{assembly} is IL only");

    /// <summary>The named assemblies and those they reference that are in the output directory (not the framework's).</summary>
    private static SortedSet<string> Closure(params string[] roots)
    {
        var found = new SortedSet<string>(StringComparer.Ordinal);
        var pending = new Stack<string>(roots);
        while (pending.TryPop(out var name))
        {
            var path = Path.Combine(RepoLayout.DaemonDirectory, name + ".dll");
            if (!File.Exists(path) || !found.Add(name))
            {
                continue;
            }

            using var reader = new PEReader(File.OpenRead(path));
            var metadata = reader.GetMetadataReader();
            foreach (var handle in metadata.AssemblyReferences)
            {
                pending.Push(metadata.GetString(metadata.GetAssemblyReference(handle).Name));
            }
        }

        return found;
    }

    private static bool IsReadyToRun(string assembly)
    {
        using var reader = new PEReader(File.OpenRead(Path.Combine(RepoLayout.DaemonDirectory, assembly)));
        var cor = reader.PEHeaders.CorHeader ?? throw new InvalidOperationException($"{assembly} is not a managed assembly");
        return cor.ManagedNativeHeaderDirectory.Size > 0;
    }
}
