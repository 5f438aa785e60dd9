namespace IpcBench.Daemon.Tests.Infrastructure;

/// <summary>
/// A directory of its own for one test's daemons (runtime directory and database), so daemons restarted by the test
/// find the same state and parallel or earlier tests never do; removed with everything in it on Dispose.
/// </summary>
internal sealed class DaemonDirectory : IDisposable
{
    public DaemonDirectory(string prefix) =>
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "ipcbench-tests", prefix + "-" + Guid.NewGuid().ToString("N")[..10]);

    public string Path { get; }

    /// <summary>A fresh settings record each time (tests amend it with `with`), always on this directory.</summary>
    public DaemonSettings Settings => new()
    {
        RuntimeBase = System.IO.Path.Combine(Path, "runtime"),
        DatabasePath = System.IO.Path.Combine(Path, "state", "scenarios.db"),
    };

    public void Dispose()
    {
        if (Directory.Exists(Path))
        {
            Directory.Delete(Path, recursive: true);
        }
    }
}
