using System.Reflection;

namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// Where the executables under test are: the daemon (and the BenchAgent beside it) as built for the same
/// configuration and target framework as this test assembly. grpcurl is found by GrpcurlLocator (tests/Shared).
/// </summary>
internal static class RepoLayout
{
    public static readonly string Root = FindRoot();

    /// <summary>Debug or Release: whatever this test assembly was built as.</summary>
    public static readonly string Configuration =
        typeof(RepoLayout).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration is { Length: > 0 } configuration
            ? configuration
            : new DirectoryInfo(AppContext.BaseDirectory).Parent!.Name;

    public static readonly string TargetFramework = new DirectoryInfo(AppContext.BaseDirectory).Name;

    public static readonly string DaemonDirectory = Path.Combine(Root, "src", "BenchDaemon", "bin", Configuration, TargetFramework);

    public static readonly string DaemonExecutable = Path.Combine(DaemonDirectory, "BenchDaemon");

    /// <summary>The soak driver behind bench/soak.sh, as built for the same configuration.</summary>
    public static readonly string SoakTool = Path.Combine(Root, "bench", "Soak", "bin", Configuration, TargetFramework, "Soak.dll");

    private static string FindRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "IpcBench.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"IpcBench.sln was not found in any directory above {AppContext.BaseDirectory}.");
    }
}
