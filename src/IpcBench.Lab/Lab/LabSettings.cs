using System.Security.Cryptography.X509Certificates;

namespace IpcBench.Daemon.Lab;

/// <summary>The daemons of a lab run and how to reach them, as `run --daemons` (LabOptions) read them.</summary>
/// <param name="Trusted">--ca-file's certificates, trusted as roots besides the system's; null: the system's only.</param>
/// <param name="Token">--token-file's bearer token, sent to every daemon; null: none.</param>
internal sealed record LabSettings(IReadOnlyList<LabDaemon> Daemons, bool OneAtATime, X509Certificate2Collection? Trusted, string? Token);

/// <summary>Where a lab run reports a daemon's progress, every time the daemon says something.</summary>
internal interface ILabProgress
{
    void Update(LabMachineRun machine);
}
