namespace IpcBench.Tests.Shared;

/// <summary>
/// Finds the grpcurl the tests drive the daemon with: <c>$GRPCURL</c>, then <c>PATH</c>, then
/// <c>../shared/tools/grpcurl</c> beside the repository (developers' machines have that folder; a clone does not).
/// Absent, tests that need it skip naming where it was looked for, unless CI=true or IPCBENCH_REQUIRE_GRPCURL=1,
/// where they fail: CI exports the variable so a broken grpcurl set-up can never pass as a run of skips.
/// </summary>
internal static class GrpcurlLocator
{
    public const string Variable = "GRPCURL";

    public const string RequireVariable = "IPCBENCH_REQUIRE_GRPCURL";

    public sealed record Location(string? Path, IReadOnlyList<string> LookedAt)
    {
        public string Missing =>
            $"grpcurl was not found (looked at {string.Join("; ", LookedAt)}); install grpcurl 1.9 or later on the PATH, or set {Variable} to its path";
    }

    public static Location Default { get; } = Locate(Environment.GetEnvironmentVariable(Variable), Environment.GetEnvironmentVariable("PATH"), FindRoot());

    /// <summary>CI=true or IPCBENCH_REQUIRE_GRPCURL=1 in this process's environment.</summary>
    public static bool Required => IsRequired(Environment.GetEnvironmentVariable);

    public static bool IsRequired(Func<string, string?> environment) =>
        string.Equals(environment("CI"), "true", StringComparison.OrdinalIgnoreCase) || environment(RequireVariable) == "1";

    /// <summary>Why a test needing grpcurl is skipped; null when it runs (found, or required and so left to fail).</summary>
    public static string? SkipReason(Location location, bool required) =>
        location.Path is not null || required ? null : $"{location.Missing}; CI=true or {RequireVariable}=1 makes this a failure";

    /// <summary>The grpcurl to run; a test failure naming where it was looked for when there is none.</summary>
    public static string Require() => Default.Path
        ?? throw new Xunit.Sdk.XunitException(Required ? $"{Default.Missing} (required: CI=true or {RequireVariable}=1)" : Default.Missing);

    /// <summary>grpcurl for a test whose grpcurl part is optional: null when absent, a failure when absent but required.</summary>
    public static string? Optional() => Default.Path is null && !Required ? null : Require();

    public static Location Locate(string? variable, string? path, string repositoryRoot)
    {
        var lookedAt = new List<string>();
        if (string.IsNullOrEmpty(variable))
        {
            lookedAt.Add($"${Variable} (unset)");
        }
        else
        {
            if (IsExecutable(variable))
            {
                return new(System.IO.Path.GetFullPath(variable), lookedAt);
            }

            lookedAt.Add($"${Variable}={variable} (not an executable file)");
        }

        var directories = (path ?? string.Empty).Split(':', StringSplitOptions.RemoveEmptyEntries);
        foreach (var directory in directories)
        {
            var candidate = System.IO.Path.Combine(directory, "grpcurl");
            if (IsExecutable(candidate))
            {
                return new(candidate, lookedAt);
            }
        }

        lookedAt.Add(directories.Length == 0 ? "PATH (empty)" : $"PATH ({string.Join(':', directories)})");
        var beside = BesideRepository(repositoryRoot);
        if (IsExecutable(beside))
        {
            return new(beside, lookedAt);
        }

        lookedAt.Add(beside);
        return new(null, lookedAt);
    }

    /// <summary>../shared/tools/grpcurl from the repository root: the folder developers keep beside their clones.</summary>
    public static string BesideRepository(string repositoryRoot) =>
        System.IO.Path.GetFullPath(System.IO.Path.Combine(repositoryRoot, "..", "shared", "tools", "grpcurl"));

    private static bool IsExecutable(string file) =>
        File.Exists(file) && (File.GetUnixFileMode(file) & (UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute)) != 0;

    // This file is linked into several test projects, so it finds the root itself rather than through one project's helper.
    private static string FindRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(directory.FullName, "IpcBench.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"IpcBench.sln was not found in any directory above {AppContext.BaseDirectory}.");
    }
}

/// <summary>A fact skipped, naming grpcurl and where it was looked for, when it is absent and not required.</summary>
public sealed class GrpcurlFactAttribute : FactAttribute
{
    public GrpcurlFactAttribute()
    {
        if (GrpcurlLocator.SkipReason(GrpcurlLocator.Default, GrpcurlLocator.Required) is { } reason)
        {
            Skip = reason;
        }
    }
}
