using IpcBench.Daemon.Tests.Infrastructure;
namespace IpcBench.Daemon.Tests;

/// <summary>
/// Where the tests look for grpcurl ($GRPCURL, PATH, ../shared/tools beside the repository), in that order, and
/// whether a missing one is a skip or a failure. Each case builds its own directories, so none depends on this machine.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class GrpcurlLocatorTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("ipcbench-grpcurl-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void TheVariable_ComesFirst()
    {
        var (root, besideRoot) = Repository(withShared: true);
        var onPath = Executable("path", "grpcurl");
        var named = Executable("elsewhere", "grpcurl-1.9.4");

        var location = GrpcurlLocator.Locate(named, Path.GetDirectoryName(onPath), root);

        Assert.Equal(named, location.Path);
        Assert.NotEqual(besideRoot, location.Path);
    }

    [Fact]
    public void Path_ComesBeforeTheSharedFolder_AndAVariableThatIsNoFileIsPassedOver()
    {
        var (root, _) = Repository(withShared: true);
        var onPath = Executable("path", "grpcurl");
        var missing = Path.Combine(_directory, "nothing-here");

        var location = GrpcurlLocator.Locate(missing, $"{Path.Combine(_directory, "empty")}:{Path.GetDirectoryName(onPath)}", root);

        Assert.Equal(onPath, location.Path);
    }

    [Fact]
    public void TheSharedFolderBesideTheRepository_IsTheLastResort()
    {
        var (root, besideRoot) = Repository(withShared: true);
        var notExecutable = Path.Combine(Directory.CreateDirectory(Path.Combine(_directory, "path")).FullName, "grpcurl");
        File.WriteAllText(notExecutable, string.Empty);

        var location = GrpcurlLocator.Locate(null, Path.GetDirectoryName(notExecutable), root);

        Assert.Equal(besideRoot, location.Path);
    }

    [Fact]
    public void Absent_SkipsNamingGrpcurlAndEveryPlaceLooked_UnlessRequired()
    {
        var (root, besideRoot) = Repository(withShared: false);
        var pathDirectory = Directory.CreateDirectory(Path.Combine(_directory, "path")).FullName;

        var location = GrpcurlLocator.Locate(null, pathDirectory, root);

        Assert.Null(location.Path);
        var skip = GrpcurlLocator.SkipReason(location, required: false);
        Assert.NotNull(skip);
        Assert.StartsWith("grpcurl was not found", skip, StringComparison.Ordinal);
        Assert.Contains("$GRPCURL (unset)", skip, StringComparison.Ordinal);
        Assert.Contains(pathDirectory, skip, StringComparison.Ordinal);
        Assert.Contains(besideRoot, skip, StringComparison.Ordinal);
        Assert.Contains("IPCBENCH_REQUIRE_GRPCURL=1", skip, StringComparison.Ordinal);

        Assert.Null(GrpcurlLocator.SkipReason(location, required: true));
        Assert.Null(GrpcurlLocator.SkipReason(GrpcurlLocator.Locate(null, null, Repository(withShared: true).Root), required: false));
    }

    [Theory]
    [InlineData(null, null, false)]
    [InlineData("true", null, true)]
    [InlineData("TRUE", null, true)]
    [InlineData("false", null, false)]
    [InlineData(null, "1", true)]
    [InlineData(null, "0", false)]
    public void Required_UnderCiOrTheVariable(string? ci, string? require, bool expected)
    {
        var environment = new Dictionary<string, string?> { ["CI"] = ci, ["IPCBENCH_REQUIRE_GRPCURL"] = require };

        Assert.Equal(expected, GrpcurlLocator.IsRequired(name => environment.GetValueOrDefault(name)));
    }

    /// <summary>A repository root, and where ../shared/tools/grpcurl is (created, executable, when asked).</summary>
    private (string Root, string BesideRoot) Repository(bool withShared)
    {
        var parent = Directory.CreateDirectory(Path.Combine(_directory, withShared ? "with" : "without")).FullName;
        var root = Directory.CreateDirectory(Path.Combine(parent, "repo")).FullName;
        var besideRoot = GrpcurlLocator.BesideRepository(root);
        Assert.StartsWith(parent + Path.DirectorySeparatorChar, besideRoot, StringComparison.Ordinal);
        if (withShared && !File.Exists(besideRoot))
        {
            Executable(Path.GetDirectoryName(besideRoot)!, Path.GetFileName(besideRoot));
        }

        return (root, besideRoot);
    }

    private string Executable(string directory, string name)
    {
        var path = Path.Combine(Directory.CreateDirectory(Path.Combine(_directory, directory)).FullName, name);
        File.WriteAllText(path, "#!/bin/sh\n");
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }
}
