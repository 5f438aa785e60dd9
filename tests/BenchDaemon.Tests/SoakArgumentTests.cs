using IpcBench.Daemon.Tests.Infrastructure;
using Xunit.Abstractions;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// The soak tool's refusals: a malformed option before anything starts, and a value the daemon's own rule refuses under
/// the option that set it (exit code 2, as for any bad argument), with its daemon gone.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class SoakArgumentTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData("2", "--topology: '2' is not PUBLISHERS:SUBSCRIBERS (e.g. 2:4)")]
    [InlineData("1:x", "--topology: '1:x' is not PUBLISHERS:SUBSCRIBERS (e.g. 2:4)")]
    [InlineData("0:2", "--topology: spec.publishers")]
    [InlineData("1:100000", "--topology: spec.subscribers")]
    public async Task ABadTopology_IsRefusedUnderItsOption_WithExitCode2(string topology, string expected)
    {
        // A TMPDIR of its own: the soak's daemon lives in a directory under it, by which it is found if it outlived the tool.
        string temp = Directory.CreateTempSubdirectory("ipcbench-soak-args.").FullName;
        try
        {
            var (exitCode, stdout, errors) = await SoakTool.RunAsync(
                ["5s", "--transports", "uds", "--rate", "100", "--wait", "block", "--topology", topology], TimeSpan.FromMinutes(2),
                environment: new Dictionary<string, string> { ["TMPDIR"] = temp });
            output.WriteLine(errors);
            output.WriteLine(stdout);
            Assert.Equal(2, exitCode);
            Assert.Contains("soak: " + expected, errors, StringComparison.Ordinal);
            Assert.DoesNotContain("Unhandled exception", errors, StringComparison.Ordinal);
            Assert.DoesNotContain(ProcessTree.All(), p => p.CommandLine.Contains(temp, StringComparison.Ordinal) && p.IsAlive);
            Assert.Empty(Directory.EnumerateFileSystemEntries(temp));
        }
        finally
        {
            Directory.Delete(temp, recursive: true);
        }
    }
}
