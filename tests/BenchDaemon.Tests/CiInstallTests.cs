using System.Diagnostics;
using IpcBench.Daemon.Tests.Infrastructure;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// .ci/install-tools.sh on machines of our kind as they come, against a stub apt-get that records each call and "installs"
/// a package by putting its commands on PATH: only what is missing is installed, one package per call; Chromium alone
/// beside an existing Node and npm (a nodesource Node ships its own npm, and Debian's npm conflicts with it); a failed
/// install stops the script naming the package and apt's message.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class CiInstallTests : IDisposable
{
    private static readonly string Script = Path.Combine(RepoLayout.Root, ".ci", "install-tools.sh");

    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-ci-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public async Task BesideNodeAndNpm_OnlyTheMissingPackagesAreInstalled_NotDebiansNodeOrNpm()
    {
        var (exitCode, _, calls) = await InstallAsync(present: ["node", "npm"]);

        Assert.Equal(0, exitCode);
        Assert.Equal(["update -qq", .. Installs("libclang-dev", "prometheus", "jq", "bsdutils", "chromium")], calls);
    }

    [Fact]
    public async Task OnABareMachine_NodeAndNpmComeFromDebianToo_EachPackageOnce()
    {
        var (exitCode, _, calls) = await InstallAsync(present: []);

        Assert.Equal(0, exitCode);
        Assert.Equal(["update -qq", .. Installs("libclang-dev", "prometheus", "jq", "bsdutils", "chromium", "nodejs", "npm")], calls);
    }

    [Fact]
    public async Task WithEverythingThere_AptIsNotCalledAtAll()
    {
        var (exitCode, _, calls) = await InstallAsync(present: ["prometheus", "promtool", "jq", "script", "node", "npm"], chromium: true, libclang: true);

        Assert.Equal(0, exitCode);
        Assert.Empty(calls);
    }

    [Fact]
    public async Task AFailedInstall_StopsTheScript_NamingThePackageAndAptsMessage()
    {
        var (exitCode, stderr, calls) = await InstallAsync(present: ["node", "npm"], failing: "chromium");

        Assert.NotEqual(0, exitCode);
        Assert.Contains("ci: apt-get install chromium failed:", stderr, StringComparison.Ordinal);
        Assert.Contains("E: Unable to correct problems, you have held broken packages.", stderr, StringComparison.Ordinal);
        Assert.Equal("install -y -qq --no-install-recommends chromium", calls[^1]);
    }

    private static string[] Installs(params string[] packages) => [.. packages.Select(p => $"install -y -qq --no-install-recommends {p}")];

    /// <summary>Runs ci_install_tools with only the stubs on PATH, in a directory with a native/ folder (as the repo has).</summary>
    private async Task<(int ExitCode, string Stderr, IReadOnlyList<string> AptCalls)> InstallAsync(
        string[] present, bool chromium = false, bool libclang = false, string failing = "")
    {
        string bin = Directory.CreateDirectory(Path.Combine(_directory, "bin")).FullName;
        string work = Directory.CreateDirectory(Path.Combine(_directory, "work", "native")).Parent!.FullName;
        string log = Path.Combine(_directory, "apt.log");
        string dpkgDb = Path.Combine(_directory, "dpkg.db");
        string chromiumPath = Path.Combine(_directory, "chromium");
        File.WriteAllText(log, string.Empty);
        File.WriteAllText(dpkgDb, libclang ? "libclang-dev\n" : string.Empty);
        foreach (var command in present)
        {
            WriteExecutable(Path.Combine(bin, command), "#!/bin/sh\n");
        }

        if (chromium)
        {
            WriteExecutable(chromiumPath, "#!/bin/sh\n");
        }

        WriteExecutable(Path.Combine(bin, "apt-get"), AptGetStub);
        WriteExecutable(Path.Combine(bin, "dpkg"), "#!/bin/bash\nwhile read -r p; do [[ $p == \"${@: -1}\" ]] && exit 0; done < \"$DPKG_DB\"; exit 1\n");

        var start = new ProcessStartInfo("/bin/bash")
        {
            ArgumentList = { "-c", $"source '{Script}'; ci_install_tools" },
            WorkingDirectory = work,
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        };
        start.Environment["PATH"] = bin;
        start.Environment["BIN"] = bin;
        start.Environment["LOG"] = log;
        start.Environment["DPKG_DB"] = dpkgDb;
        start.Environment["CHROMIUM"] = chromiumPath;
        start.Environment["FAIL_PKG"] = failing;
        using var process = Process.Start(start)!;
        var stderr = process.StandardError.ReadToEndAsync();
        await process.StandardOutput.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
        return (process.ExitCode, await stderr, File.ReadAllLines(log));
    }

    private static void WriteExecutable(string path, string text)
    {
        File.WriteAllText(path, text);
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
    }

    /// <summary>Records its arguments; "installs" a package by creating the commands it provides, or fails as apt does.</summary>
    private const string AptGetStub = """
        #!/bin/bash
        echo "$*" >> "$LOG"
        [[ $1 == update ]] && exit 0
        pkg=${@: -1}
        if [[ $pkg == "$FAIL_PKG" ]]; then echo "E: Unable to correct problems, you have held broken packages." >&2; exit 100; fi
        case $pkg in
          prometheus) commands="prometheus promtool" ;;
          bsdutils) commands=script ;;
          nodejs) commands=node ;;
          chromium) commands=; printf '#!/bin/sh\n' > "$CHROMIUM"; /bin/chmod +x "$CHROMIUM" ;;
          libclang-dev) commands=; echo libclang-dev >> "$DPKG_DB" ;;
          *) commands=$pkg ;;
        esac
        for c in $commands; do printf '#!/bin/sh\n' > "$BIN/$c"; /bin/chmod +x "$BIN/$c"; done
        """;
}
