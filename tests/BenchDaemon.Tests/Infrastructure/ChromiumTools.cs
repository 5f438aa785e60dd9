namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// What the report's browser test needs: Debian's Chromium (/usr/bin/chromium), node, and tests/node_modules
/// (playwright-core; `npm ci` in tests/). Missing under CI=true or IPCBENCH_REQUIRE_CHROMIUM=1 is a failure naming the fix;
/// elsewhere a skip.
/// </summary>
internal static class ChromiumTools
{
    public const string Executable = "/usr/bin/chromium";

    public static readonly string TestsDirectory = Path.Combine(RepoLayout.Root, "tests");

    public static readonly string CheckScript = Path.Combine(TestsDirectory, "browser", "check-report.mjs");

    public static readonly string NodeModules = Path.Combine(TestsDirectory, "node_modules");

    public static string? Missing
    {
        get
        {
            var missing = new List<string>();
            if (!File.Exists(Executable))
            {
                missing.Add($"{Executable} (apt-get install -y chromium)");
            }

            if (Node is null)
            {
                missing.Add("node (apt-get install -y nodejs npm)");
            }

            if (!Directory.Exists(Path.Combine(NodeModules, "playwright-core")))
            {
                missing.Add("tests/node_modules (cd tests && npm ci)");
            }

            return missing.Count == 0 ? null : "missing: " + string.Join(", ", missing) + "; .ci/run installs them";
        }
    }

    public static bool Required =>
        string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase)
        || Environment.GetEnvironmentVariable("IPCBENCH_REQUIRE_CHROMIUM") == "1";

    public static string? Node => new[] { "/usr/bin/node", "/usr/local/bin/node" }
        .Concat((Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(':', StringSplitOptions.RemoveEmptyEntries).Select(d => Path.Combine(d, "node")))
        .FirstOrDefault(File.Exists);

    /// <summary>Opens a report file in the run's one Chromium (<see cref="ChromiumSession"/>); check-report.mjs's JSON line for it.</summary>
    public static Task<string> CheckAsync(string report, string screenshot)
    {
        if (Missing is { } missing)
        {
            throw new Xunit.Sdk.XunitException($"{missing} (required: CI=true or IPCBENCH_REQUIRE_CHROMIUM=1)");
        }

        return ChromiumSession.CheckAsync(Node!, CheckScript, TestsDirectory, report, screenshot, TimeSpan.FromSeconds(120));
    }
}

/// <summary>A fact skipped when Chromium, node or tests/node_modules are missing, unless CI=true or IPCBENCH_REQUIRE_CHROMIUM=1 (then it fails saying what to install).</summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    public ChromiumFactAttribute()
    {
        if (!ChromiumTools.Required && ChromiumTools.Missing is { } missing)
        {
            Skip = $"{missing}; CI=true or IPCBENCH_REQUIRE_CHROMIUM=1 makes this a failure";
        }
    }
}
