using IpcBench.Transports;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Core;

/// <summary>
/// The daemon's private directory for sockets and the agent endpoint: BASE/PID, mode 0700. Directories of daemons that
/// died without cleaning up are removed at start-up, together with the transports' own stale resources and the .NET
/// diagnostic files of dead processes (<see cref="DiagnosticFiles"/>).
/// </summary>
public sealed class RuntimeDirectory : IDisposable
{
    private readonly ILogger<RuntimeDirectory> _logger;

    public RuntimeDirectory(IOptions<DaemonOptions> options, TransportRegistry transports, ILogger<RuntimeDirectory> logger)
    {
        _logger = logger;
        var baseDirectory = options.Value.RuntimeDirectory ?? System.IO.Path.Combine(System.IO.Path.GetTempPath(), "ipcbench");
        Directory.CreateDirectory(baseDirectory);
        RemoveStaleDirectories(baseDirectory);
        if (DiagnosticFiles.RemoveOfDeadProcesses() is > 0 and var removed)
        {
            _logger.LogInformation("Removed {Count} .NET diagnostic files of dead processes from {Directory}", removed, System.IO.Path.GetTempPath());
        }

        Path = System.IO.Path.Combine(baseDirectory, Environment.ProcessId.ToString());
        Directory.CreateDirectory(Path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        // CreateDirectory leaves an existing directory as it is (a leftover of an earlier process with this pid, or one
        // planted in a shared base directory). chmod only succeeds for the owner, so this also proves the directory ours.
        File.SetUnixFileMode(Path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        TransportEnvironment = new TransportEnvironment(Path, Environment.ProcessId);
        foreach (var transport in transports.All)
        {
            try
            {
                transport.RemoveStaleResources(TransportEnvironment);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                _logger.LogWarning(e, "Could not remove stale resources of transport {Transport}", transport.Id);
            }
        }
    }

    public string Path { get; }

    public TransportEnvironment TransportEnvironment { get; }

    public string AgentSocketPath => System.IO.Path.Combine(Path, "agent.sock");

    /// <summary>Makes the agent socket connectable by the daemon's user only (mode 0600), once Kestrel has created it.</summary>
    public void RestrictAgentSocket() => File.SetUnixFileMode(AgentSocketPath, UnixFileMode.UserRead | UnixFileMode.UserWrite);

    private void RemoveStaleDirectories(string baseDirectory)
    {
        foreach (var directory in Directory.EnumerateDirectories(baseDirectory))
        {
            if (int.TryParse(System.IO.Path.GetFileName(directory), out var pid) && pid != Environment.ProcessId && !ProcessInstance.IsRunning(pid))
            {
                try
                {
                    Directory.Delete(directory, recursive: true);
                    _logger.LogInformation("Removed runtime directory {Directory} of dead daemon {Pid}", directory, pid);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    _logger.LogWarning(e, "Could not remove stale runtime directory {Directory}", directory);
                }
            }
        }
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _logger.LogWarning(e, "Could not remove runtime directory {Directory}", Path);
        }
    }
}
