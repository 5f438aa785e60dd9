using System.Reflection.PortableExecutable;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The daemon's output directory as built (and as published: the Dockerfile checks the same): built for this machine's
/// RID, so its native libraries sit beside the daemon, and precompiled (ReadyToRun) except for the assemblies whose
/// loops are measured, which must reach the JIT as IL (BenchDaemon.csproj says why).
/// </summary>
[Collection(LightCollection.Name)]
public sealed class DaemonOutputTests
{
    /// <summary>The hot loops: the transports, the workload's publisher and receiver loops, the iceoryx2 binding.</summary>
    public static readonly TheoryData<string> Measured = new() { "IpcBench.Transports.dll", "IpcBench.Workload.dll", "IpcBench.Iceoryx2.dll" };

    /// <summary>What every daemon, CLI verb and agent loads at start-up: ours and the NuGet libraries'.</summary>
    public static readonly TheoryData<string> StartUp = new()
    {
        "BenchDaemon.dll", "BenchAgent.dll", "IpcBench.Engine.dll", "IpcBench.Contracts.dll", "IpcBench.Reports.dll",
        "Google.Protobuf.dll", "Grpc.AspNetCore.Server.dll", "Grpc.Net.Client.dll", "Serilog.dll", "OpenTelemetry.dll",
    };

    [Fact]
    public void CarriesTheNativeSqliteForThisMachine()
    {
        // Without it the daemon runs with no scenario database.
        var library = Path.Combine(RepoLayout.DaemonDirectory, "libe_sqlite3.so");
        Assert.True(File.Exists(library), $"{library} is missing");
    }

    [Theory]
    [MemberData(nameof(Measured))]
    public void MeasuredAssemblies_StayIL(string assembly) => Assert.False(IsReadyToRun(assembly), $"{assembly} is precompiled");

    [Theory]
    [MemberData(nameof(StartUp))]
    public void StartUpAssemblies_ArePrecompiled(string assembly) => Assert.True(IsReadyToRun(assembly), $"{assembly} is IL only");

    private static bool IsReadyToRun(string assembly)
    {
        using var reader = new PEReader(File.OpenRead(Path.Combine(RepoLayout.DaemonDirectory, assembly)));
        var cor = reader.PEHeaders.CorHeader ?? throw new InvalidOperationException($"{assembly} is not a managed assembly");
        return cor.ManagedNativeHeaderDirectory.Size > 0;
    }
}
