using IpcBench.Tests.Shared;

namespace IpcBench.GrpcLite.Tests;

/// <summary>The real grpcurl binary the project's users drive the daemon with, at ../shared/tools/grpcurl from the repo.</summary>
internal static class Grpcurl
{
    public static readonly string ExpectedPath = FindExpectedPath();

    public static bool Exists => File.Exists(ExpectedPath);

    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(params string[] args)
    {
        var result = await GrpcurlRunner.RunAsync(ExpectedPath, args);
        return (result.ExitCode, result.Stdout, result.Stderr);
    }

    private static string FindExpectedPath()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "IpcBench.sln")))
            {
                return Path.GetFullPath(Path.Combine(dir.FullName, "..", "shared", "tools", "grpcurl"));
            }
        }

        return "(IpcBench.sln not found above the test assembly)/../shared/tools/grpcurl";
    }
}

/// <summary>A fact that is skipped, saying where grpcurl was expected, when the binary is missing.</summary>
public sealed class GrpcurlFactAttribute : FactAttribute
{
    public GrpcurlFactAttribute()
    {
        if (!Grpcurl.Exists)
        {
            Skip = $"grpcurl not found at {Grpcurl.ExpectedPath}; these interop tests need the real binary.";
        }
    }
}

/// <summary>The theory counterpart of <see cref="GrpcurlFactAttribute"/>.</summary>
public sealed class GrpcurlTheoryAttribute : TheoryAttribute
{
    public GrpcurlTheoryAttribute()
    {
        if (!Grpcurl.Exists)
        {
            Skip = $"grpcurl not found at {Grpcurl.ExpectedPath}; these interop tests need the real binary.";
        }
    }
}
